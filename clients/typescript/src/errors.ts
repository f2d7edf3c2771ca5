import type { components } from "./openapi.js";

/** A response the API refused or failed with, after the retries. `status` is
 * the HTTP status, 0 when no response came (the server could not be reached,
 * the request timed out, or no credentials were found to sign it). */
export class ApiError extends Error {
  readonly status: number;
  /** The server's message (`{"error": ...}`), without the status. */
  readonly detail: string;
  /** The response's `X-Gb-Call-Id`, when there was one. */
  readonly callId: string | undefined;

  constructor(status: number, detail: string, callId?: string) {
    super(`${status}: ${detail}`);
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
    this.callId = callId;
  }
}

/** A queued call (`Prefer: respond-async`) that ended in an error: its record
 * holds the error message as its status. */
export class CallFailedError extends ApiError {
  readonly call: components["schemas"]["CallOut"];

  constructor(call: components["schemas"]["CallOut"]) {
    super(0, call.status, call.call_id);
    this.name = "CallFailedError";
    this.call = call;
  }
}
