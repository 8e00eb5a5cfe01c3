import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { apiClient, type ErrorJson } from "../support/api.ts";
import { createUser, PASSWORD, type TestUser } from "../support/auth.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startTestServer } from "../support/server.ts";

/** The documented limits (README, "Signing in"). */
const PER_ACCOUNT = 5;
const PER_ADDRESS = 20;
const WINDOW_SECONDS = 15 * 60;

/** Every failed attempt here comes from 127.0.0.1, so each limit gets a server of its own. */
describe("sign-in rate limits", () => {
  const fixtures: ServerFixture[] = [];
  after(() => Promise.all(fixtures.map((fixture) => fixture.dispose())));

  const start = async (): Promise<ServerFixture> => {
    const fixture = await serverFixture();
    fixtures.push(fixture);
    return fixture;
  };

  const attempt = (url: string, email: string, password: string) =>
    apiClient(url, null).post<ErrorJson>("/v1/auth/sessions", { email, password });

  it(`after ${PER_ACCOUNT} wrong passwords the account is refused with 429 and Retry-After, even with the right one`, async () => {
    const fixture = await start();
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    for (let index = 0; index < PER_ACCOUNT; index += 1) {
      const response = await attempt(fixture.server.url, user.email, "wrong password here");
      assert.equal(response.status, 401, `attempt ${index + 1}`);
    }
    const refused = await attempt(fixture.server.url, user.email, user.password);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, "rate_limited");
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(retryAfter > 0 && retryAfter <= WINDOW_SECONDS, `Retry-After: ${retryAfter}`);
  });

  it("an unknown account is limited the same way, so the 429 does not tell either", async () => {
    const fixture = await start();
    for (let index = 0; index < PER_ACCOUNT; index += 1) {
      await attempt(fixture.server.url, "nobody@example.com", "wrong password here");
    }
    const refused = await attempt(fixture.server.url, "nobody@example.com", "wrong password");
    assert.equal(refused.status, 429);
  });

  it("a successful sign-in starts the account's count again", async () => {
    const fixture = await start();
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    for (let round = 0; round < 2; round += 1) {
      for (let index = 0; index < PER_ACCOUNT - 1; index += 1) {
        await attempt(fixture.server.url, user.email, "wrong password here");
      }
      const ok = await attempt(fixture.server.url, user.email, user.password);
      assert.equal(ok.status, 201, ok.text);
    }
  });

  it(`after ${PER_ADDRESS} failures from one address, every account is refused from it; the count survives a restart`, async () => {
    const fixture = await start();
    const user: TestUser = await createUser(fixture.server, fixture.owner.id, "member");
    for (let index = 0; index < PER_ADDRESS; index += 1) {
      const response = await attempt(
        fixture.server.url,
        `guess${index}@example.com`,
        "wrong password here",
      );
      assert.equal(response.status, 401, `attempt ${index + 1}`);
    }
    assert.equal((await attempt(fixture.server.url, user.email, PASSWORD)).status, 429);

    // The counts are in the database: a new process on it refuses as well.
    await fixture.server.stop();
    const restarted = await startTestServer({ dataDir: join(fixture.dir, "data") });
    try {
      assert.equal((await attempt(restarted.url, user.email, PASSWORD)).status, 429);
    } finally {
      await restarted.stop();
    }
  });
});
