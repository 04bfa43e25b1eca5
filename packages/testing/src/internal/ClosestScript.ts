// For a query no script answers: the scripted text nearest to it, and where the two part, so
// a test's failure shows the typo or the changed clause instead of a list to compare by eye.

/** Edit distance (insertions, deletions, substitutions), two rows at a time. */
const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** The candidate nearest to `text` (ties: the first), or `undefined` when there is none. */
export const closest = (text: string, candidates: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    const d = distance(text, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

const CONTEXT = 12

/** `at character N: "…sent…" where the script has "…scripted…"`. */
export const difference = (sent: string, scripted: string): string => {
  let at = 0
  while (at < sent.length && at < scripted.length && sent[at] === scripted[at]) at++
  const excerpt = (text: string) =>
    `${at > CONTEXT ? "…" : ""}${text.slice(Math.max(0, at - CONTEXT), at + CONTEXT)}${at + CONTEXT < text.length ? "…" : ""}`
  return `they differ at character ${at}: ${JSON.stringify(excerpt(sent))} where the script has ${JSON.stringify(excerpt(scripted))}`
}
