import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { testBackend } from "../support/backend.ts";

/**
 * The README and the pages of docs/ as GitHub shows them: every relative link reaches a file,
 * every `#anchor` a heading of the page it names (GitHub's slugs), every topic page has a
 * table of contents that lists each of its sections, and no page says the same thing twice.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url));

/** The pages a reader moves between; each has a "## Contents" listing its sections. */
const topicPages = [
  "README.md",
  "docs/cli.md",
  "docs/configuration.md",
  "docs/dashboard.md",
  "docs/delivery.md",
  "docs/development.md",
  "docs/http-api.md",
  "docs/operations.md",
  "docs/platform-api.md",
  "docs/postgresql.md",
  "docs/security.md",
  "docs/telemetry.md",
  "docs/verifying.md",
];

async function markdownFiles(): Promise<string[]> {
  const docs = (await readdir(join(root, "docs"))).filter((name) => name.endsWith(".md"));
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

/** The page without its fenced code blocks, whose `#` lines and brackets are not Markdown. */
function proseLines(text: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/**
 * GitHub's anchor of a heading: its text as rendered (code spans, links and emphasis reduced
 * to their text), lower-cased, every character but letters, marks, digits, `_`, `-` and
 * spaces dropped, spaces made hyphens; a repeated slug gets `-1`, `-2`… in page order.
 */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

interface Heading {
  level: number;
  text: string;
  slug: string;
}

function headingsOf(text: string): Heading[] {
  const seen = new Map<string, number>();
  const headings: Heading[] = [];
  for (const { line } of proseLines(text)) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match === null) continue;
    const [, hashes = "", headingText = ""] = match;
    const base = githubSlug(headingText);
    const count = seen.get(base);
    seen.set(base, (count ?? -1) + 1);
    headings.push({
      level: hashes.length,
      text: headingText,
      slug: count === undefined ? base : `${base}-${count + 1}`,
    });
  }
  return headings;
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set(headingsOf(text).map((heading) => heading.slug));
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? "");
  return anchors;
}

interface Link {
  target: string;
  line: number;
}

/** Inline links and images, and reference definitions, outside code spans and blocks. */
function linksOf(text: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, "``");
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] ?? "", line: number });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition !== null) links.push({ target: definition[1] ?? "", line: number });
  }
  return links;
}

const pages = new Map<string, string>();
async function page(path: string): Promise<string> {
  let text = pages.get(path);
  if (text === undefined) {
    text = await readFile(join(root, path), "utf8");
    pages.set(path, text);
  }
  return text;
}

/** What is wrong with one link of `from`, or null. */
async function brokenLink(from: string, target: string): Promise<string | null> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:: not ours to check
  if (target === "") return "an empty link";
  const hash = target.indexOf("#");
  const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = path === "" ? from : relative(root, join(root, dirname(from), path));
  if (file.startsWith("..")) return `${target} leaves the repository`;
  if (!existsSync(join(root, file))) return `${file} does not exist`;
  if (anchor === null) return null;
  if (!file.endsWith(".md")) {
    return /^L\d+(-L\d+)?$/.test(anchor) ? null : `#${anchor} in ${file}, which is not Markdown`;
  }
  return anchorsOf(await page(file)).has(anchor) ? null : `${file} has no heading #${anchor}`;
}

describe("the README and docs/", { skip: testBackend !== "sqlite" && "SQLite run only" }, () => {
  it("GitHub's anchors: text reduced to letters, digits, _ and -, spaces made hyphens, repeats numbered", () => {
    assert.equal(
      githubSlug("Forwarding to your machine: `svc listen`"),
      "forwarding-to-your-machine-svc-listen",
    );
    assert.equal(githubSlug("JSON input: `--stdin`"), "json-input---stdin");
    assert.equal(
      githubSlug("svc — self-hostable webhook delivery"),
      "svc--self-hostable-webhook-delivery",
    );
    assert.equal(
      githubSlug("How workers hear of new work: LISTEN/NOTIFY"),
      "how-workers-hear-of-new-work-listennotify",
    );
    assert.equal(githubSlug("Deduplicate by `Webhook-Id`"), "deduplicate-by-webhook-id");
    assert.deepEqual(
      headingsOf("# A\n## Same\n```sh\n# not a heading\n```\n## Same\n").map((h) => h.slug),
      ["a", "same", "same-1"],
    );
  });

  it("every relative link reaches a file, and every #anchor a heading of its page", async () => {
    const broken: string[] = [];
    for (const from of await markdownFiles()) {
      for (const link of linksOf(await page(from))) {
        const problem = await brokenLink(from, link.target);
        if (problem !== null) broken.push(`${from}:${link.line}: (${link.target}) ${problem}`);
      }
    }
    assert.deepEqual(broken, [], `broken links:\n${broken.join("\n")}`);
  });

  it("each topic page has a table of contents that links every one of its sections", async () => {
    const missing: string[] = [];
    for (const path of topicPages) {
      const text = await page(path);
      const start = text.indexOf("\n## Contents\n");
      if (start === -1) {
        missing.push(`${path}: no "## Contents"`);
        continue;
      }
      const next = text.indexOf("\n## ", start + 1);
      const contents = text.slice(start, next === -1 ? undefined : next);
      // The sections after it; what comes before (the README's first screen) needs no entry.
      for (const heading of headingsOf(text.slice(start))) {
        if (heading.level !== 2 || heading.text === "Contents") continue;
        if (!contents.includes(`](#${heading.slug})`)) {
          missing.push(`${path}: "## ${heading.text}" is not in its Contents`);
        }
      }
    }
    assert.deepEqual(missing, [], missing.join("\n"));
  });

  it("no page gives the same bolded term two bullets, and none cites a SPEC.md it does not have", async () => {
    const problems: string[] = [];
    for (const path of await markdownFiles()) {
      if (path === "docs/decisions.md") continue; // a history: each decision stands alone
      const text = await page(path);
      const terms = new Map<string, number>();
      for (const { line, number } of proseLines(text)) {
        const term = /^\s*[-*] (\*\*[^*]+\*\*)/.exec(line)?.[1];
        if (term === undefined) continue;
        const first = terms.get(term);
        if (first !== undefined)
          problems.push(`${path}:${number}: ${term} again (first at ${first})`);
        else terms.set(term, number);
      }
      if (text.includes("SPEC.md"))
        problems.push(`${path}: cites SPEC.md, which is not in the repository`);
    }
    assert.deepEqual(problems, [], problems.join("\n"));
  });
});
