import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fuzzApi } from "../support/fuzz.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";

/** `npm run fuzz -- --runs N` runs the same for longer and reports its figures. */
describe("a fuzz run over every endpoint's path, query, headers and body (decision 28)", () => {
  let api: InProcessApi;
  before(async () => {
    api = await inProcessApi();
  });
  after(async () => {
    await api.dispose();
  });

  it("never answers 5xx, always refuses in the envelope, and stores no forbidden character", async () => {
    const figures = await fuzzApi(api, 1500);
    assert.equal(figures.serverErrors, 0);
    assert.ok(figures.distinctShapes > 500, `varied: ${figures.distinctShapes} shapes`);
  });
});
