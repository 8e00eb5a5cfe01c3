import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { clientEnv, listedDestinations, registerDirectly } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { startTerminal, type Terminal } from "../support/terminal.ts";

const url = "https://public.example.test/hooks";
/** Begins every colour and style sequence. */
const ESCAPE = String.fromCharCode(27);

/** What only a terminal brings out: the delete confirmation, the pager, colour. */
describe("svc webhooks on a terminal", () => {
  let fixture: ServerFixture;
  const terminals: Terminal[] = [];

  before(async () => {
    fixture = await serverFixture();
  });
  after(async () => {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    await fixture.dispose();
  });

  const open = async (
    args: readonly string[],
    env: Record<string, string> = {},
    workspace: Workspace = fixture.owner,
    size?: { columns: number; rows: number },
  ): Promise<Terminal> => {
    const terminal = await startTerminal(args, { ...clientEnv(fixture, workspace), ...env }, size);
    terminals.push(terminal);
    return terminal;
  };

  const exists = async (id: string): Promise<boolean> =>
    (await listedDestinations(fixture)).some((item) => item.id === id);

  it("delete asks for confirmation; answering no deletes nothing (SPEC 4.6)", async () => {
    const created = await registerDirectly(fixture, { url });
    const terminal = await open(["webhooks", "delete", created.id]);
    await terminal.waitFor(new RegExp(`Delete webhook destination ${created.id} .*\\[y/N\\]`));
    assert.ok(await exists(created.id), "nothing is sent before the answer");
    await terminal.typeLine("n");
    assert.equal(await terminal.exitStatus(), 2);
    assert.match(
      await terminal.screen(),
      new RegExp(`Cancelled: ${created.id} was not deleted\\. \\(cancelled\\)`),
    );
    assert.ok(await exists(created.id));
  });

  it("delete asks for confirmation; answering yes deletes and prints deleted: true (SPEC 4.6)", async () => {
    const created = await registerDirectly(fixture, { url });
    const terminal = await open(["webhooks", "delete", created.id]);
    await terminal.waitFor(/\[y\/N\]/);
    await terminal.typeLine("yes");
    assert.equal(await terminal.exitStatus(), 0);
    assert.match(await terminal.screen(), /^deleted: true$/m);
    assert.ok(!(await exists(created.id)));
  });

  it("--yes skips the question on a terminal too", async () => {
    const created = await registerDirectly(fixture, { url });
    const terminal = await open(["webhooks", "delete", created.id, "--yes"]);
    assert.equal(await terminal.exitStatus(), 0);
    assert.doesNotMatch(await terminal.screen(), /\[y\/N\]/);
    assert.ok(!(await exists(created.id)));
  });

  describe("the pager", () => {
    let many: Workspace;

    before(async () => {
      many = await createWorkspace(fixture.server);
      for (let index = 0; index < 15; index += 1) {
        await registerDirectly(fixture, { url: `${url}/${index}` }, many);
      }
    });

    const small = { columns: 200, rows: 10 };

    it("output longer than the screen goes through $PAGER", async () => {
      const paged = join(fixture.dir, "paged.txt");
      const terminal = await open(["webhooks", "list"], { PAGER: `tee ${paged}` }, many, small);
      assert.equal(await terminal.exitStatus(), 0);
      // The pager gets what a terminal would: styled, for `less -R`.
      const text = (await readFile(paged, "utf8")).replace(
        new RegExp(`${ESCAPE}\\[\\d+m`, "g"),
        "",
      );
      assert.match(text, /^ID +URL +EVENTS/);
      assert.equal(text.trimEnd().split("\n").length, 16);
    });

    it("--no-pager, and output that fits the screen, are written directly", async () => {
      const noPager = join(fixture.dir, "no-pager.txt");
      const first = await open(
        ["webhooks", "list", "--no-pager"],
        { PAGER: `tee ${noPager}` },
        many,
        small,
      );
      assert.equal(await first.exitStatus(), 0);
      assert.match(await first.screen(), /https:\/\/public\.example\.test\/hooks\/0/);
      await assert.rejects(stat(noPager), { code: "ENOENT" });

      const short = join(fixture.dir, "short.txt");
      const second = await open(
        ["webhooks", "list", "--fields", "id", "--page-all"],
        { PAGER: `tee ${short}` },
        fixture.owner,
        { columns: 200, rows: 40 },
      );
      assert.equal(await second.exitStatus(), 0);
      await assert.rejects(stat(short), { code: "ENOENT" });
    });
  });

  it("colour on a terminal, and none when NO_COLOR is set", async () => {
    await registerDirectly(fixture, { url });
    const coloured = await open(["webhooks", "list", "--no-pager"]);
    assert.equal(await coloured.exitStatus(), 0);
    assert.ok((await coloured.screen(true)).includes(`${ESCAPE}[1mID `), "a bold header");

    const plain = await open(["webhooks", "list", "--no-pager"], { NO_COLOR: "1" });
    assert.equal(await plain.exitStatus(), 0);
    const screen = await plain.screen(true);
    assert.match(screen, /^ID +URL/m);
    assert.ok(!screen.includes(ESCAPE));
  });
});
