import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

const OPENSSL = "/usr/bin/openssl";

/** How long the generated certificates are valid, from the moment they are made. */
const VALID_DAYS = 2;

/**
 * Every name and address in the leaf certificate. Beware: Node (and OpenSSL's host check)
 * ignore a wildcard directly under a single-label suffix, so `*.test` matches nothing; it is
 * listed only for other clients. `*.hooks.test` is the wildcard that works (`a.hooks.test`).
 */
export const TEST_CERT_DNS_NAMES = [
  "localhost",
  "*.test",
  "hooks.test",
  "rebind.test",
  "*.hooks.test",
] as const;
export const TEST_CERT_IPS = ["127.0.0.1", "127.0.0.2", "::1"] as const;

/**
 * A throwaway certificate authority and one leaf certificate it signed, for HTTPS servers
 * that tests run on loopback. A process trusts the CA with `NODE_EXTRA_CA_CERTS=caCertPath`.
 */
export interface TestCa {
  /** The CA certificate (PEM) on disk: the value for `NODE_EXTRA_CA_CERTS`. */
  readonly caCertPath: string;
  readonly caCertPem: string;
  /** The leaf certificate (PEM), for the names and addresses listed above. */
  readonly certPem: string;
  /** The leaf's private key (PEM, PKCS#8, EC P-256). */
  readonly keyPem: string;
}

/**
 * Our own OpenSSL configuration, so neither the system's openssl.cnf nor its default
 * extension sections can add to or conflict with the extensions below.
 */
function opensslConfig(): string {
  const altNames = [
    ...TEST_CERT_DNS_NAMES.map((name, index) => `DNS.${index + 1} = ${name}`),
    ...TEST_CERT_IPS.map((ip, index) => `IP.${index + 1} = ${ip}`),
  ];
  return [
    "[req]",
    "distinguished_name = req_dn",
    "prompt = no",
    "",
    "[req_dn]",
    "CN = svc test",
    "",
    "[v3_ca]",
    "basicConstraints = critical, CA:TRUE, pathlen:0",
    "keyUsage = critical, keyCertSign, cRLSign",
    "subjectKeyIdentifier = hash",
    "",
    "[v3_leaf]",
    "basicConstraints = critical, CA:FALSE",
    "keyUsage = critical, digitalSignature",
    "extendedKeyUsage = serverAuth",
    "subjectKeyIdentifier = hash",
    "authorityKeyIdentifier = keyid:always",
    "subjectAltName = @alt_names",
    "",
    "[alt_names]",
    ...altNames,
    "",
  ].join("\n");
}

async function openssl(args: readonly string[], cwd: string): Promise<void> {
  try {
    await execFileAsync(OPENSSL, args, { cwd });
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    const detail = typeof stderr === "string" && stderr !== "" ? `: ${stderr.trim()}` : "";
    throw new Error(`openssl ${args.join(" ")} failed${detail}`, { cause: error });
  }
}

/** A random positive serial number, so two CAs made in one run never share one. */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return `0x${bytes.toString("hex")}`;
}

/**
 * Generates, in `dir` (created if missing), a CA and a leaf certificate signed by it, with
 * the `openssl` command line: EC P-256 keys, SHA-256 signatures, valid for two days.
 */
export async function createTestCa(dir: string): Promise<TestCa> {
  await mkdir(dir, { recursive: true });
  const config = join(dir, "openssl.cnf");
  const caKey = join(dir, "ca.key");
  const caCert = join(dir, "ca.crt");
  const leafKey = join(dir, "leaf.key");
  const leafCsr = join(dir, "leaf.csr");
  const leafCert = join(dir, "leaf.crt");
  await writeFile(config, opensslConfig());

  const ecKey = (out: string): string[] => [
    "genpkey",
    "-algorithm",
    "EC",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-out",
    out,
  ];
  await Promise.all([openssl(ecKey(caKey), dir), openssl(ecKey(leafKey), dir)]);

  await Promise.all([
    openssl(
      [
        "req",
        "-config",
        config,
        "-new",
        "-x509",
        "-key",
        caKey,
        "-sha256",
        "-days",
        String(VALID_DAYS),
        "-set_serial",
        serial(),
        "-subj",
        `/CN=svc test CA ${randomBytes(4).toString("hex")}`,
        "-extensions",
        "v3_ca",
        "-out",
        caCert,
      ],
      dir,
    ),
    openssl(
      [
        "req",
        "-config",
        config,
        "-new",
        "-key",
        leafKey,
        "-sha256",
        "-subj",
        "/CN=localhost",
        "-out",
        leafCsr,
      ],
      dir,
    ),
  ]);

  await openssl(
    [
      "x509",
      "-req",
      "-in",
      leafCsr,
      "-CA",
      caCert,
      "-CAkey",
      caKey,
      "-set_serial",
      serial(),
      "-sha256",
      "-days",
      String(VALID_DAYS),
      "-extfile",
      config,
      "-extensions",
      "v3_leaf",
      "-out",
      leafCert,
    ],
    dir,
  );

  const [caCertPem, certPem, keyPem] = await Promise.all([
    readFile(caCert, "utf8"),
    readFile(leafCert, "utf8"),
    readFile(leafKey, "utf8"),
  ]);
  return { caCertPath: caCert, caCertPem, certPem, keyPem };
}

let shared: Promise<TestCa> | undefined;

/**
 * One test CA per process, made on first use in a temporary directory that is removed when
 * the process exits. Child processes started by tests can keep using `caCertPath` until then.
 */
export function sharedTestCa(): Promise<TestCa> {
  shared ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-test-ca-"));
    process.once("exit", () => {
      rmSync(dir, { recursive: true, force: true });
    });
    return createTestCa(dir);
  })().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}
