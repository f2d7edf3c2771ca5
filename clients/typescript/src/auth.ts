import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";

import { ApiError } from "./errors.js";

/** One attempt of a request, as the auth sees it before it is sent: `url`
 * is final (its query encoded), `headers` may be added to. */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Applied to every attempt (a retry is signed again, a token fetched again). */
export interface Auth {
  apply(request: OutgoingRequest): Promise<void>;
}

type Secret = string | (() => string | Promise<string>);

async function reveal(secret: Secret): Promise<string> {
  return typeof secret === "function" ? secret() : secret;
}

/** `Authorization: Bearer`: the `jwt` stack's token, or the local server's
 * `GB_DEV_API_KEY`. A function is called for every attempt, so an expired
 * token can be renewed. */
export class Bearer implements Auth {
  constructor(private readonly token: Secret) {}

  async apply(request: OutgoingRequest): Promise<void> {
    request.headers["authorization"] = `Bearer ${await reveal(this.token)}`;
  }
}

/** `x-api-key`: the local server's `GB_DEV_API_KEY`. */
export class ApiKey implements Auth {
  constructor(private readonly key: Secret) {}

  async apply(request: OutgoingRequest): Promise<void> {
    request.headers["x-api-key"] = await reveal(this.key);
  }
}

/** AWS credentials, the shape the AWS SDK's providers return. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

export type CredentialsProvider = () => Promise<AwsCredentials>;

export interface SigV4Options {
  region: string;
  /** `execute-api` (API Gateway) unless given. */
  service?: string;
  /** Credentials, or a provider called for every attempt (e.g. the AWS SDK's
   * `fromNodeProviderChain()`, which refreshes temporary ones). Default: the
   * environment's `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
   * `AWS_SESSION_TOKEN`. */
  credentials?: AwsCredentials | CredentialsProvider;
}

/** AWS Signature Version 4 for the `iam` stack (API Gateway's IAM
 * authorization), signed with the AWS SDK's own signer. */
export class SigV4 implements Auth {
  private readonly signer: SignatureV4;

  constructor(options: SigV4Options) {
    const given = options.credentials;
    const credentials: CredentialsProvider =
      typeof given === "function" ? given : async () => given ?? fromEnvironment();
    this.signer = new SignatureV4({
      service: options.service ?? "execute-api",
      region: options.region,
      credentials,
      sha256: Sha256,
    });
  }

  async apply(request: OutgoingRequest): Promise<void> {
    const { url } = request;
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of url.searchParams) {
      const seen = query[key];
      query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const signed = await this.signer.sign({
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers: { ...request.headers, host: url.host },
      body: request.body,
    });
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name.toLowerCase() !== "host") request.headers[name] = value;
    }
  }
}

function fromEnvironment(): AwsCredentials {
  const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
  const accessKeyId = env["AWS_ACCESS_KEY_ID"];
  const secretAccessKey = env["AWS_SECRET_ACCESS_KEY"];
  if (!accessKeyId || !secretAccessKey) {
    throw new ApiError(0, "SigV4: no AWS credentials (give `credentials`, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
  }
  const sessionToken = env["AWS_SESSION_TOKEN"];
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}
