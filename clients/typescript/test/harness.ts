/** Starts test/harness.py (the fake API, and with `serve` a real `gligabao
 * serve` behind the fake LLM) and talks to its control server. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
/** clients/typescript (the tests run from build/). */
const PACKAGE = resolve(HERE, "..");
const ROOT = resolve(PACKAGE, "..", "..");

/** `GB_PYTHON`, else the repository's `.venv` (the README's set-up), else python3. */
function python(): string {
  const given = process.env["GB_PYTHON"];
  if (given) return given;
  const venv = join(ROOT, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
  received_at: number;
  sigv4_valid: boolean | null;
}

export class Harness {
  private constructor(
    private readonly proc: ChildProcess,
    readonly control: string,
    /** The fake of the API. */
    readonly fakeApi: string,
    /** The real `gligabao serve` (with `serve`). */
    readonly served: string,
    /** The served instance's `GB_DEV_API_KEY`. */
    readonly devKey: string,
  ) {}

  static async start(options: { serve: boolean }): Promise<Harness> {
    const args = [join(PACKAGE, "test", "harness.py"), ...(options.serve ? ["--serve"] : [])];
    const proc = spawn(python(), args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: proc.stdout! });
    const first = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error("harness.py: not ready after 90 s")), 90_000);
      lines.once("line", (line) => {
        clearTimeout(timer);
        ok(line);
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`harness.py exited with ${code}`));
      });
    });
    lines.close();
    proc.stdout!.resume(); // anything else it prints is dropped, not left to fill the pipe
    const ready = JSON.parse(first) as { control: string; fake_api: string; served: string | null; dev_key: string };
    return new Harness(proc, ready.control, ready.fake_api, ready.served ?? "", ready.dev_key);
  }

  /** SIGTERM, then wait for it (it stops `gligabao serve` and the fakes). */
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((ok) => this.proc.once("exit", ok));
    this.proc.kill("SIGTERM");
    await exited;
  }

  private async ask(method: string, path: string, body?: unknown): Promise<any> {
    const init: RequestInit = body === undefined ? { method } : { method, body: JSON.stringify(body) };
    const res = await fetch(this.control + path, init);
    const out = await res.json();
    if (!res.ok) throw new Error(`harness ${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out;
  }

  /** The fake LLM's next reply for a stage (`extract`, `query`, ...). */
  script(stage: string, reply: unknown): Promise<void> {
    return this.ask("POST", "/llm/script", { stage, reply });
  }

  /** The fake LLM's next answer for a stage comes after `seconds`. */
  delayLlm(seconds: number, stage: string): Promise<void> {
    return this.ask("POST", "/llm/delay", { seconds, stage });
  }

  async llmCalls(stage: string): Promise<number> {
    return (await this.ask("GET", `/llm/calls?stage=${stage}`)).calls;
  }

  /** Rows in each table of the served SQLite file. */
  rows(): Promise<Record<string, number>> {
    return this.ask("GET", "/served/rows");
  }

  /** The fake API's next `times` answers. */
  reply(status: number, body: unknown, headers: Record<string, string> = {}, times = 1): Promise<void> {
    return this.ask("POST", "/api/reply", { status, body, headers, times });
  }

  resetApi(): Promise<void> {
    return this.ask("POST", "/api/reset", {});
  }

  /** What the fake API received; with a secret, whether each SigV4 signature verifies with it. */
  requests(check?: { secret: string; region: string }): Promise<RecordedRequest[]> {
    const query = check ? `?secret=${encodeURIComponent(check.secret)}&region=${check.region}` : "";
    return this.ask("GET", `/api/requests${query}`);
  }
}
