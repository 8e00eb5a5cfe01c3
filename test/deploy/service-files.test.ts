import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { svcBin } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

const deployDir = new URL("../../../docs/deploy/", import.meta.url);

function onPath(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
}

type UnitFile = Map<string, Map<string, string[]>>;

/** A systemd unit file: its sections, each key with its values in order (keys may repeat). */
function parseUnit(text: string): UnitFile {
  const sections: UnitFile = new Map();
  let current: Map<string, string[]> | undefined;
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[([A-Za-z]+)\]$/.exec(line);
    if (section?.[1] !== undefined) {
      assert.ok(!sections.has(section[1]), `section [${section[1]}] appears twice`);
      current = new Map();
      sections.set(section[1], current);
      continue;
    }
    const entry = /^([A-Za-z]+)=(.*)$/.exec(line);
    assert.ok(entry?.[1] !== undefined && current !== undefined, `line ${index + 1}: ${raw}`);
    current.set(entry[1], [...(current.get(entry[1]) ?? []), entry[2] ?? ""]);
  }
  return sections;
}

function values(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}

describe("the deployment files in docs/deploy", () => {
  let unitText: string;
  let unit: UnitFile;
  let caddyfile: string;
  let dir: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    unitText = await readFile(new URL("svc.service", deployDir), "utf8");
    unit = parseUnit(unitText);
    caddyfile = await readFile(new URL("Caddyfile", deployDir), "utf8");
    dir = await tempDir();
  });
  after(() => dir.cleanup());

  it("the unit runs svc server as a user of its own, with a state directory, the key from an env file, and hardening", () => {
    assert.deepEqual([...unit.keys()], ["Unit", "Service", "Install"]);
    assert.deepEqual(values(unit, "Service", "User"), ["svc"]);
    assert.deepEqual(values(unit, "Service", "StateDirectory"), ["svc"]);
    assert.deepEqual(values(unit, "Service", "StateDirectoryMode"), ["0700"]);
    assert.deepEqual(values(unit, "Service", "EnvironmentFile"), ["/etc/svc/svc.env"]);
    assert.match(values(unit, "Service", "ExecStart")[0] ?? "", /\/svc server$/);
    const environment = values(unit, "Service", "Environment");
    assert.ok(environment.includes("SVC_DATA_DIR=%S/svc"), environment.join(" "));
    assert.ok(environment.includes("SVC_HOST=127.0.0.1"), "it listens on loopback only");
    assert.ok(!environment.some((line) => line.startsWith("SVC_ENCRYPTION_KEY")), "no key inline");
    for (const [key, value] of [
      ["NoNewPrivileges", "yes"],
      ["ProtectSystem", "strict"],
      ["ProtectHome", "yes"],
      ["PrivateTmp", "yes"],
      ["CapabilityBoundingSet", ""],
      ["UMask", "0077"],
    ] as const) {
      assert.deepEqual(values(unit, "Service", key), [value], key);
    }
    assert.deepEqual(values(unit, "Install", "WantedBy"), ["multi-user.target"]);
  });

  it(
    "systemd-analyze verify finds nothing to say about the unit (ExecStart pointed at this build)",
    { skip: !onPath("systemd-analyze") && "systemd-analyze is not installed on this machine" },
    async () => {
      // verify insists that ExecStart's program exists here: the unit's /usr/local/bin/svc
      // becomes this build's binary, run by this Node; every other line is checked as written.
      const local = unitText.replace(
        /^ExecStart=\/usr\/local\/bin\/svc /m,
        `ExecStart=${process.execPath} ${svcBin} `,
      );
      assert.notEqual(local, unitText);
      const path = join(dir.path, "svc.service");
      await writeFile(path, local);
      const run = spawnSync("systemd-analyze", ["verify", path], { encoding: "utf8" });
      const aboutUnit = `${run.stdout}${run.stderr}`
        .split("\n")
        .filter((line) => line.includes("svc.service"));
      assert.deepEqual(aboutUnit, [], "no warning about the unit (unknown keys, bad values)");
      assert.equal(run.status, 0, run.stderr);
    },
  );

  it("the Caddyfile proxies one site to the address the unit listens on", () => {
    const port = values(unit, "Service", "Environment")
      .find((line) => line.startsWith("SVC_PORT="))
      ?.slice("SVC_PORT=".length);
    assert.ok(port !== undefined);
    const code = caddyfile
      .split("\n")
      .filter((line) => !line.trim().startsWith("#"))
      .join("\n");
    let depth = 0;
    for (const character of code) {
      if (character === "{") depth += 1;
      if (character === "}") depth -= 1;
      assert.ok(depth >= 0, "a } closes nothing");
    }
    assert.equal(depth, 0, "every { is closed");
    assert.match(
      code,
      /^[a-z0-9.-]+\.[a-z]+ \{$/m,
      "a site block named by a host name (TLS by ACME)",
    );
    assert.match(code, new RegExp(`^\\s+reverse_proxy 127\\.0\\.0\\.1:${port} \\{$`, "m"));
  });

  it(
    "caddy adapts and validates the Caddyfile",
    {
      skip:
        !onPath("caddy") &&
        "caddy is not installed on this machine; the structure is checked above",
    },
    () => {
      execFileSync("caddy", [
        "adapt",
        "--adapter",
        "caddyfile",
        "--config",
        new URL("Caddyfile", deployDir).pathname,
        "--validate",
      ]);
    },
  );
});
