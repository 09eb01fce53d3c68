export type Row = (string | number)[];

export interface Table {
  title: string;
  head: string[];
  rows: Row[];
}

/** "97.3 %", or "–" when there is nothing to count. */
export function pct(count: number, total: number): string {
  return total === 0 ? "–" : `${((100 * count) / total).toFixed(1)} %`;
}

export function markdownTable(table: Table): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [
    `**${table.title}**`,
    "",
    line(table.head),
    line(table.head.map(() => "---")),
    ...table.rows.map(line),
  ].join("\n");
}

export const HEADING = "## Served-path evaluation (npm run eval)";
const START = "<!-- eval:start -->";
const END = "<!-- eval:end -->";

/**
 * Replaces what lies between the markers, leaving the rest of the model card (the ML side's) untouched. Adds the
 * markers under the heading when they are missing, and the heading at the end when that is missing too.
 */
export function replaceSection(readme: string, body: string): string {
  const block = `${START}\n${body}\n${END}`;
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start !== -1 && end > start) return readme.slice(0, start) + block + readme.slice(end + END.length);
  const heading = readme.search(/^#+\s*Served-path evaluation \(npm run eval\)\s*$/m);
  if (heading !== -1) {
    const lineEnd = readme.indexOf("\n", heading);
    const at = lineEnd === -1 ? readme.length : lineEnd + 1;
    return `${readme.slice(0, at)}\n${block}\n${readme.slice(at)}`;
  }
  return `${readme.trimEnd()}\n\n${HEADING}\n\n${block}\n`;
}
