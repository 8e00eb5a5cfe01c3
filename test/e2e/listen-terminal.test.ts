import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import { clientEnv } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { sequence, startReceiver, type Receiver } from "../support/receiver.ts";
import { startTerminal, type Terminal } from "../support/terminal.ts";

/** `svc listen` on a real terminal: its live lines as a developer watches them. */
describe("svc listen on a terminal", () => {
  let fixture: ServerFixture;
  let local: Receiver;
  let terminal: Terminal | undefined;

  before(async () => {
    fixture = await serverFixture({ SVC_LISTEN_HEARTBEAT: "200ms", SVC_RETRY_SCHEDULE: "50ms" });
    // The first notification meets a bug (500), the retry the fix.
    local = await startReceiver({
      ca: null,
      respond: sequence({ status: 200 }, { status: 500, body: "boom" }, { status: 200 }),
    });
  });
  after(async () => {
    await terminal?.close();
    await local.close();
    await fixture.dispose();
  });

  it("shows the session, then one line per notification as it is forwarded, and Ctrl-C ends it", async () => {
    terminal = await startTerminal(
      ["listen", "--forward-to", `${local.url}/hooks`],
      clientEnv(fixture),
      { columns: 160, rows: 30 },
    );
    await terminal.waitFor(/Listening: \* of workspace ws_\w+ → http:\/\/127\.0\.0\.1:\d+\/hooks/);
    assert.match(await terminal.screen(), /signing secret \(shown once; .*\): whsec_/);

    const api = apiClient(fixture.server.url, fixture.owner.key);
    const publish = async (type: string) => {
      const response = await api.post<{ id: string }>(`/v1/workspaces/${fixture.owner.id}/events`, {
        type,
        data: { object: { id: "job_1" } },
      });
      assert.equal(response.status, 202, response.text);
      return response.body.id;
    };
    const completed = await publish("job.completed");
    await terminal.waitFor(new RegExp(`Z  job\\.completed +${completed}  200  \\d+ ms`));
    const failed = await publish("job.failed");
    const screen = await terminal.waitFor(
      new RegExp(`Z  job\\.failed +${failed}  200  \\d+ ms  \\(attempt 2\\)`),
    );
    assert.match(screen, new RegExp(`Z  job\\.failed +${failed}  500  \\d+ ms\\n`));

    await terminal.sendKey("C-c");
    assert.equal(await terminal.exitStatus(), 0);
    assert.match(
      await terminal.screen(),
      /Stopped after 3 notification\(s\); session lsn_\w+ ended\./,
    );
  });
});
