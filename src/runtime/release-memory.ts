import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type GarbageCollector = (options: {
  type: "major";
  execution: "sync";
  flavor: "last-resort";
}) => void;

let collector: GarbageCollector | null = null;

/**
 * Gives the main thread's spare heap back to the system: one full, memory-reducing collection
 * (V8's low-memory notification). V8 keeps the heap it grew under load, and the pages it
 * freed, for as long as nothing allocates much, which after a burst of deliveries can be
 * 50–100 MB for hours (decision 25). Called when the delivery side falls idle; it takes a
 * few tens of milliseconds.
 *
 * The collector is V8's `gc` extension, made visible to a fresh context only (the way Jest's
 * leak detector reaches it), so that no `gc` global appears for the application's own code.
 */
export function releaseMemory(): void {
  if (collector === null) {
    setFlagsFromString("--expose-gc");
    collector = runInNewContext("gc") as GarbageCollector;
  }
  collector({ type: "major", execution: "sync", flavor: "last-resort" });
}
