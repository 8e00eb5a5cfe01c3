/**
 * Writes dist/src/cli/help.json, every command's `--help` as `svc` prints it, which `svc`
 * prints without loading commander (src/cli/prerendered-help.ts). `npm run build` runs it after
 * the compiler, so the texts are never older than the commands they describe.
 */
import { writeFile } from "node:fs/promises";
import { PRERENDERED_HELP_FILE } from "../src/cli/prerendered-help.ts";
import { renderHelpTexts } from "../src/cli/render-help-texts.ts";

await writeFile(PRERENDERED_HELP_FILE, `${JSON.stringify(await renderHelpTexts())}\n`);
