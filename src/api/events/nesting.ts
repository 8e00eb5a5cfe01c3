/**
 * How deeply `value` nests objects and arrays, counting itself as 1 if it is one (0 for a
 * scalar), but no further than `limit + 1`: enough to tell that it is too deep. Iterative, so
 * that no depth overflows the stack, and it stops at the first branch past the limit.
 */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: { readonly value: object; readonly depth: number }[] = [];
  if (typeof value === "object" && value !== null) stack.push({ value, depth: 1 });
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    deepest = Math.max(deepest, entry.depth);
    if (deepest > limit) return deepest;
    const members: unknown[] = Array.isArray(entry.value)
      ? entry.value
      : Object.values(entry.value);
    for (const member of members) {
      if (typeof member === "object" && member !== null) {
        stack.push({ value: member, depth: entry.depth + 1 });
      }
    }
  }
  return deepest;
}
