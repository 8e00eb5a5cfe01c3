import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  environmentNames,
  loadServerConfig,
  operationsEndpointsOf,
  resolveTable,
} from "../../src/config/server-config.ts";
import { tempDir } from "../support/temp.ts";

describe("server configuration", () => {
  it("has documented defaults", () => {
    const config = loadServerConfig({ env: { HOME: "/home/u" }, flags: {} });
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.port, 8787);
    assert.equal(config.database, undefined);
    assert.deepEqual(config.allowPrivateNetworks, []);
    assert.deepEqual(config.destinationPorts, ["443", "8443"]);
    assert.ok(config.dataDir.endsWith(join("svc")));
  });

  it("takes defaults < file < environment < flags", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "svc.json");
      await writeFile(file, JSON.stringify({ port: 1111, host: "0.0.0.0", logLevel: "warn" }));
      const config = loadServerConfig({
        env: { SVC_CONFIG: file, SVC_PORT: "2222", SVC_LOG_LEVEL: "debug" },
        flags: { port: "3333", host: undefined },
      });
      assert.equal(config.host, "0.0.0.0", "from the file");
      assert.equal(config.logLevel, "debug", "the environment over the file");
      assert.equal(config.port, 3333, "flags over everything");
    } finally {
      await dir.cleanup();
    }
  });

  it("takes operations endpoints from the environment and a JSON list, and refuses half of one", () => {
    const secret = `whsec_${"c".repeat(43)}`;
    const config = loadServerConfig({
      env: {
        SVC_OPERATIONS_URL: "https://ops.example.com/notices",
        SVC_OPERATIONS_SECRET: secret,
        SVC_OPERATIONS_ENDPOINTS: JSON.stringify([{ url: "https://pager.example.net/h", secret }]),
        SVC_FAILING_NOTICE_INTERVAL: "30m",
      },
      flags: {},
    });
    assert.deepEqual(operationsEndpointsOf(config), [
      { url: "https://ops.example.com/notices", secret },
      { url: "https://pager.example.net/h", secret },
    ]);
    assert.equal(config.failingNoticeInterval, 1_800_000);
    assert.deepEqual(operationsEndpointsOf(loadServerConfig({ env: {}, flags: {} })), []);
    assert.throws(
      () =>
        loadServerConfig({
          env: {
            SVC_OPERATIONS_URL: "http://ops.example.com/notices",
            SVC_OPERATIONS_ENDPOINTS: JSON.stringify([{ url: "https://x.example", secret: "s" }]),
          },
          flags: {},
        }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "invalid_config");
        assert.match(error.message, /SVC_OPERATIONS_URL.*https/);
        assert.match(error.message, /SVC_OPERATIONS_ENDPOINTS.*whsec_/);
        return true;
      },
    );
    assert.throws(
      () =>
        loadServerConfig({ env: { SVC_OPERATIONS_URL: "https://ops.example.com/n" }, flags: {} }),
      /SVC_OPERATIONS_SECRET.*together/,
    );
  });

  it("reports every problem at once, naming the environment variable", () => {
    assert.throws(
      () =>
        loadServerConfig({
          env: {
            SVC_PORT: "99999",
            SVC_ALLOW_PRIVATE_NETWORKS: "10.0.0.0/33",
            SVC_LOG_LEVEL: "loud",
          },
          flags: {},
        }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "invalid_config");
        assert.match(error.message, /SVC_PORT/);
        assert.match(error.message, /SVC_ALLOW_PRIVATE_NETWORKS/);
        assert.match(error.message, /SVC_LOG_LEVEL/);
        return true;
      },
    );
  });

  it("reads the batch linger as a duration of at most 100ms, 0 turning it off", () => {
    const linger = (value?: string, database?: string): number =>
      loadServerConfig({
        env: {
          HOME: "/home/u",
          ...(value === undefined ? {} : { SVC_BATCH_LINGER: value }),
          ...(database === undefined ? {} : { SVC_DATABASE_URL: database }),
        },
        flags: {},
      }).batchLinger;
    // None set: 2ms on PostgreSQL, 0 on SQLite (decision 68); a setting holds on either.
    assert.equal(linger(undefined, "postgres://db.internal/svc"), 2);
    assert.equal(linger(undefined, "postgresql://db.internal/svc"), 2);
    assert.equal(linger(), 0);
    assert.equal(linger(undefined, "/var/lib/svc/svc.db"), 0);
    assert.equal(linger("3ms"), 3);
    assert.equal(linger("0ms", "postgres://db.internal/svc"), 0);
    assert.equal(linger("0ms"), 0);
    assert.equal(linger("100ms"), 100);
    for (const wrong of ["101ms", "1s", "soon"]) {
      assert.throws(
        () => linger(wrong),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "invalid_config");
          assert.match(error.message, /SVC_BATCH_LINGER/);
          return true;
        },
        wrong,
      );
    }
  });

  it("reads destination ports as a list of ports and ranges, and refuses anything else", () => {
    const config = loadServerConfig({
      env: { SVC_DESTINATION_PORTS: "443, 8443,1024-65535" },
      flags: {},
    });
    assert.deepEqual(config.destinationPorts, ["443", "8443", "1024-65535"]);
    assert.throws(
      () => loadServerConfig({ env: { SVC_DESTINATION_PORTS: "443,ssh,0" }, flags: {} }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "invalid_config");
        assert.match(
          error.message,
          /destinationPorts \(SVC_DESTINATION_PORTS\) entry 2: must be ports/,
        );
        assert.match(error.message, /SVC_DESTINATION_PORTS\) entry 3/);
        return true;
      },
    );
  });

  it("refuses an empty list of destination ports from a file", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "svc.json");
      await writeFile(file, JSON.stringify({ destinationPorts: [] }));
      assert.throws(
        () => loadServerConfig({ env: { SVC_CONFIG: file }, flags: {} }),
        /destinationPorts \(SVC_DESTINATION_PORTS\): must allow at least one port/,
      );
    } finally {
      await dir.cleanup();
    }
  });

  it("refuses a resolve entry whose address is not an IP address", () => {
    assert.throws(
      () => loadServerConfig({ env: { SVC_RESOLVE: "a.test=not-an-ip" }, flags: {} }),
      /SVC_RESOLVE\) entry 1: the address after = must be an IPv4 or IPv6 address/,
    );
  });

  it("reads the resolve table as name=address entries, repeatable", () => {
    const config = loadServerConfig({
      env: { SVC_RESOLVE: "a.test=1.2.3.4, a.test=::1,b.test=5.6.7.8" },
      flags: {},
    });
    assert.deepEqual(
      [...resolveTable(config)],
      [
        ["a.test", ["1.2.3.4", "::1"]],
        ["b.test", ["5.6.7.8"]],
      ],
    );
  });
});

describe("the configuration reference's table (docs/configuration.md)", () => {
  it("lists every setting with its environment variable", async () => {
    const { readFile } = await import("node:fs/promises");
    const page = await readFile(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    const table = page.slice(page.indexOf("## Every setting"));
    for (const [setting, variable] of Object.entries(environmentNames)) {
      const row = table.split("\n").find((line) => line.startsWith(`| \`${setting}\``));
      assert.ok(row, `docs/configuration.md lacks a row for ${setting}`);
      assert.ok(row.includes(`\`${variable}\``), `its row for ${setting} lacks ${variable}`);
    }
  });
});
