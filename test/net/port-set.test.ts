import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PortSet } from "../../src/net/port-set.ts";

describe("PortSet", () => {
  it("holds the ports and ranges written, bounds included", () => {
    const ports = new PortSet(["443", " 8443 ", "1024-2048"]);
    for (const port of [443, 8443, 1024, 1500, 2048])
      assert.equal(ports.has(port), true, `${port}`);
    for (const port of [0, 22, 444, 1023, 2049, 65535]) {
      assert.equal(ports.has(port), false, `${port}`);
    }
    assert.equal(ports.toString(), "443, 8443, 1024-2048");
  });

  it("accepts only ports 1 to 65535 and ranges low-high", () => {
    for (const entry of ["1", "65535", "1-65535", "443-443"]) {
      assert.equal(PortSet.isValidEntry(entry), true, entry);
    }
    for (const entry of ["0", "65536", "2000-1000", "443-", "-443", "https", "4 43", "", "0x1bb"]) {
      assert.equal(PortSet.isValidEntry(entry), false, entry);
    }
    assert.throws(() => new PortSet(["443", "70000"]), /70000/);
  });
});
