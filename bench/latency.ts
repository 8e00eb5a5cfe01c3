/**
 * `npm run bench:latency -- <tree A> <tree B> [--postgres] [--rates 50,200,1000]
 * [--seconds 5]`: what a publish and a delivery wait at a steady rate below the machine's
 * limit, for two builds in turn. For each rate, each tree's server (started once, on a fresh
 * database, warmed up) is sent `--seconds` of events at that rate (paced, not a closed loop:
 * bench:ab and bench:paired saturate the machine, where batches are as large as they get),
 * and the run prints the publish's answer time (p50, p99) and the time from the publish to
 * the receiver's first receipt (p50, p99), in ms. The trees alternate at each rate, B first
 * at every other one, so that neither meets the machine's quieter minutes alone.
 */
import { publishPaced } from "./measure.ts";
import { withBuildSides, type BuildSide } from "./sides.ts";
import { argument, percentile, progress, round } from "./stats.ts";

const trees = process.argv.slice(2).filter((word, index, words) => {
  const previous = words[index - 1];
  return !word.startsWith("--") && previous !== "--rates" && previous !== "--seconds";
});
const postgres = process.argv.includes("--postgres");
const rates = (argument("--rates") ?? "50,200,1000").split(",").map(Number);
const seconds = Number(argument("--seconds") ?? 5);
/** Events each server takes before the first rate: its hot code compiled (bench/measure.ts). */
const warmUp = 5000;

/** `count` events at `perSecond`: each publish's answer time and its delivery's, in ms. */
async function paced(
  side: BuildSide,
  count: number,
  perSecond: number,
): Promise<{ answered: number[]; delivered: number[] }> {
  side.receiver.reset();
  const answered: number[] = [];
  const sentAt = await publishPaced(side.service, count, perSecond, answered);
  await side.receiver.waitForDistinct(count, 120_000);
  const delivered = [...sentAt].map(
    ([id, sent]) => (side.receiver.firstReceipt.get(id) ?? Number.NaN) - sent,
  );
  return { answered, delivered };
}

async function main(): Promise<void> {
  if (trees.length !== 2 || rates.some((rate) => !(rate > 0))) {
    process.stderr.write(
      "usage: npm run bench:latency -- <tree A> <tree B> [--postgres] [--rates 50,200,1000] " +
        "[--seconds 5]\n",
    );
    process.exitCode = 2;
    return;
  }
  await withBuildSides(trees, { name: "latency", postgres, path: "/latency" }, async (sides) => {
    for (const side of sides) {
      progress(`${side.tree}: ${warmUp} events of warm-up…`);
      await paced(side, warmUp, 1000);
    }
    for (const [round_, rate] of rates.entries()) {
      const order = round_ % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        progress(`${side.tree}: ${rate}/s for ${seconds} s…`);
        const { answered, delivered } = await paced(side, rate * seconds, rate);
        const ms = (values: number[], p: number): number => round(percentile(values, p), 2);
        process.stdout.write(
          `${JSON.stringify({
            label: side === sides[0] ? "A" : "B",
            tree: side.tree,
            rate,
            publish_p50_ms: ms(answered, 50),
            publish_p99_ms: ms(answered, 99),
            delivered_p50_ms: ms(delivered, 50),
            delivered_p99_ms: ms(delivered, 99),
          })}\n`,
        );
      }
    }
  });
}

await main();
