import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { AppError } from "../../src/errors.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { checkDestinationUrl, parseDestinationUrl } from "../../src/net/destination-url.ts";
import { PortSet } from "../../src/net/port-set.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/** Properties of the URL rules; every name resolves to one public address here. */
const runs = { numRuns: 300 };

const publicResolver = { resolve: () => Promise.resolve(["93.184.215.14"]) };

const forbiddenCharacter = fc
  .oneof(
    fc.integer({ min: 0x00, max: 0x1f }),
    fc.integer({ min: 0x7f, max: 0x9f }),
    fc.constantFrom(0x20, 0xa0, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000),
    fc.constantFrom(0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069),
    fc.integer({ min: 0xd800, max: 0xdfff }),
  )
  .map((codePoint) => String.fromCharCode(codePoint));

/** https URLs with any Unicode text in their path, query and fragment. */
const anyText = fc.string({ unit: "grapheme", maxLength: 12 });
const unicodeUrl = fc
  .tuple(
    fc.mixedCase(fc.domain()),
    fc.option(fc.integer({ min: 1, max: 65535 })),
    anyText,
    anyText,
    anyText,
  )
  .map(
    ([host, port, path, query, fragment]) =>
      `https://${host}${port === null ? "" : `:${port}`}/${path}?${query}#${fragment}`,
  );

function codeOf(action: () => unknown): string | null {
  try {
    action();
    return null;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe("destination URL properties", { skip: sqlitePassOnly }, () => {
  it("refuses a forbidden character anywhere, naming it by code point and position only", () => {
    const accepted = unicodeUrl.filter((url) => codeOf(() => parseDestinationUrl(url)) === null);
    fc.assert(
      fc.property(accepted, fc.nat(), forbiddenCharacter, (url, at, character) => {
        // Between characters: inside a surrogate pair would make a lone surrogate of its own.
        const characters = Array.from(url);
        const index = at % (characters.length + 1);
        const poisoned = [...characters.slice(0, index), character, ...characters.slice(index)];
        const codePoint = `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
        assert.throws(
          () => parseDestinationUrl(poisoned.join("")),
          (error: Error & { code?: string }) => {
            assert.equal(error.code, "invalid_url");
            assert.equal(
              error.message.replace(/, (a|an) [a-z ]+,/, ""),
              `The destination URL contains ${codePoint} at position ${index + 1}.`,
            );
            // A space is the one a sentence has anyway.
            if (character !== " ") assert.ok(!error.message.includes(character), "echoed");
            return true;
          },
        );
      }),
      runs,
    );
  });

  it("stores what it accepts as printable ASCII that parses to itself", () => {
    fc.assert(
      fc.property(unicodeUrl, (url) => {
        let parsed: URL;
        try {
          parsed = parseDestinationUrl(url);
        } catch (error) {
          assert.ok(error instanceof AppError && error.code === "invalid_url", String(error));
          return;
        }
        assert.match(parsed.href, /^[\x21-\x7e]+$/);
        assert.equal(parseDestinationUrl(parsed.href).href, parsed.href);
      }),
      runs,
    );
  });

  it("accepts the canonical form of an accepted URL again, unchanged", async () => {
    const dependencies = {
      resolver: publicResolver,
      addressPolicy: new AddressPolicy(),
      destinationPorts: new PortSet(["1-65535"]),
    };
    await fc.assert(
      fc.asyncProperty(unicodeUrl, async (url) => {
        if (codeOf(() => parseDestinationUrl(url)) !== null) return;
        const canonical = (await checkDestinationUrl(url, dependencies)).url.href;
        assert.equal((await checkDestinationUrl(canonical, dependencies)).url.href, canonical);
      }),
      runs,
    );
  });

  it("admits a port exactly when the setting holds it (443 when none is written), any port when allowlisted", async () => {
    const range = fc
      .tuple(fc.integer({ min: 1, max: 65535 }), fc.integer({ min: 0, max: 2000 }))
      .map(([low, width]) => [low, Math.min(65535, low + width)] as const);
    const setting = fc.array(range, { minLength: 1, maxLength: 3 });
    const port = fc.option(fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constant(443)));
    await fc.assert(
      fc.asyncProperty(setting, port, async (ranges, chosen) => {
        const ports = new PortSet(ranges.map(([low, high]) => `${low}-${high}`));
        const check = (host: string, allowlist: string[]): Promise<unknown> =>
          checkDestinationUrl(`https://${host}${chosen === null ? "" : `:${chosen}`}/`, {
            resolver: publicResolver,
            addressPolicy: new AddressPolicy(allowlist),
            destinationPorts: ports,
          });
        const effective = chosen ?? 443;
        const held = ranges.some(([low, high]) => effective >= low && effective <= high);
        if (held) await check("hooks.example.test", []);
        else
          await assert.rejects(check("hooks.example.test", []), { code: "url_port_not_allowed" });
        await check("127.0.0.1", ["127.0.0.0/8"]);
      }),
      runs,
    );
  });
});
