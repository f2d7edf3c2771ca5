/** When and how long to retry. Between attempts the client waits a random
 * time up to `baseMs * 2**n` (capped at `maxMs`: "full jitter"), or what the
 * server's `Retry-After` asks for; a `Retry-After` longer than
 * `retryAfterMaxMs` is not waited for: the error is thrown at once. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
  retryAfterMaxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseMs: 500,
  maxMs: 20_000,
  retryAfterMaxMs: 120_000,
};

/** The statuses worth another attempt: 409 (the same Idempotency-Key still
 * running, or a name leased by a concurrent write), 429 and 5xx. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([409, 429, 500, 502, 503, 504]);

/** Milliseconds from a `Retry-After` header: delta-seconds or an HTTP date
 * (a date in the past is no wait); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the HTTP date forms (RFC 9110: IMF-fixdate and the obsolete ones), not any string Date.parse takes.
  if (!/^[A-Za-z]{3,9},? /.test(text)) return undefined;
  const when = Date.parse(text);
  if (Number.isNaN(when)) return undefined;
  return Math.max(0, when - now);
}

/** The wait before attempt `attempt + 1` when the server said nothing. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  return random() * cap;
}
