/** Sending one request: auth per attempt, retries with jittered backoff or
 * the server's `Retry-After`, errors as `ApiError`. Mirrors the Python
 * client's `_send` (shared/gligabao/client.py). */
import type { Auth, OutgoingRequest } from "./auth.js";
import { ApiError } from "./errors.js";
import { DEFAULT_RETRY, RETRY_STATUSES, type RetryPolicy, backoffMs, retryAfterMs } from "./retry.js";

/** Told before each wait between two attempts (for logs and metrics). */
export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** The HTTP status it got, 0 when no response came. */
  status: number;
  reason: string;
  delayMs: number;
}

export interface TransportOptions {
  url: string;
  auth?: Auth | undefined;
  timeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  fetch?: typeof fetch | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

export interface Reply {
  status: number;
  body: unknown;
  headers: Headers;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class Transport {
  readonly base: string;
  readonly retry: RetryPolicy;
  private readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    this.base = options.url.replace(/\/+$/, "");
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.options = options;
  }

  /** `target`: a path with its query, from the base URL. */
  async send(method: string, target: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const doFetch = this.options.fetch ?? fetch;
    const timeoutMs = this.options.timeoutMs ?? 120_000;
    for (let attempt = 1; ; attempt++) {
      const request: OutgoingRequest = {
        method,
        url: new URL(this.base + target),
        headers: { ...headers },
        body: data,
      };
      if (data !== undefined) request.headers["content-type"] = "application/json";
      // Again per attempt: a fresh signature, a fresh token. Its own failure
      // (no credentials, a token function that throws) is not retried.
      await this.options.auth?.apply(request);
      let status: number;
      let text: string;
      let replyHeaders: Headers;
      try {
        const response = await doFetch(request.url, {
          method,
          headers: request.headers,
          body: data,
          signal: AbortSignal.timeout(timeoutMs),
        });
        status = response.status;
        replyHeaders = response.headers;
        text = await response.text();
        if (status >= 400) {
          const detail = errorMessage(text, response.statusText);
          const callId = replyHeaders.get("x-gb-call-id") ?? undefined;
          const wait = retryAfterMs(replyHeaders.get("retry-after"));
          if (
            !RETRY_STATUSES.has(status) ||
            attempt >= this.retry.attempts ||
            (wait !== undefined && wait > this.retry.retryAfterMaxMs)
          ) {
            throw new ApiError(status, detail, callId);
          }
          await this.wait({ method, path: target, attempt, status, reason: detail }, wait);
          continue;
        }
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // The request may or may not have arrived: safe to send again for
        // every route (a remember carries its Idempotency-Key).
        const reason = describe(err);
        if (attempt >= this.retry.attempts) throw new ApiError(0, reason);
        await this.wait({ method, path: target, attempt, status: 0, reason }, undefined);
        continue;
      }
      return { status, body: parseJson(text, status, replyHeaders), headers: replyHeaders };
    }
  }

  private async wait(event: Omit<RetryEvent, "delayMs">, retryAfter: number | undefined): Promise<void> {
    const delayMs = retryAfter ?? backoffMs(event.attempt, this.retry);
    this.options.onRetry?.({ ...event, delayMs });
    await (this.options.sleep ?? sleep)(delayMs);
  }
}

function parseJson(text: string, status: number, headers: Headers): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(status, "the response is not JSON", headers.get("x-gb-call-id") ?? undefined);
  }
}

/** `{"error": ...}` (ours), `{"message": ...}` (API Gateway's own answers),
 * else the reason phrase. */
function errorMessage(text: string, statusText: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === "object") {
      const { error, message } = body as { error?: unknown; message?: unknown };
      if (typeof error === "string") return error;
      if (typeof message === "string") return message;
    }
  } catch {
    // not JSON: fall through
  }
  return statusText || "error";
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = cause && typeof cause === "object" ? (cause as { code?: unknown }).code : undefined;
    return `${err.name}: ${err.message}${typeof code === "string" ? ` (${code})` : ""}`;
  }
  return String(err);
}
