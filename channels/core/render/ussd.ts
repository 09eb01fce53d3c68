/** What a handset shows of one USSD screen; the `CON `/`END ` prefix is protocol, not shown. */
export const USSD_SCREEN_MAX = 182;

export type UssdReply = `CON ${string}` | `END ${string}`;

/**
 * One screen: the body first, the numbered options last. The options are what the user needs to carry on,
 * so when the screen is too small the body is shortened (at a word), never the options.
 */
export function ussdScreen(kind: "CON" | "END", body: string, options: string[] = []): UssdReply {
  const footer = options.join("\n");
  const room = USSD_SCREEN_MAX - (footer ? footer.length + 1 : 0);
  const text = [shorten(body.trim(), room), footer].filter(Boolean).join("\n");
  return `${kind} ${text}`;
}

function shorten(text: string, room: number): string {
  if (text.length <= room) return text;
  const cut = text.slice(0, Math.max(0, room - 3));
  const atWord = cut.lastIndexOf(" ");
  return `${(atWord > room / 2 ? cut.slice(0, atWord) : cut).trimEnd()}...`;
}

/** Packs lines into pages of at most `room` characters; a line longer than a page gets a page to itself. */
export function paginate(lines: string[], room: number): string[] {
  const pages: string[] = [];
  let page = "";
  for (const line of lines) {
    const next = page ? `${page}\n${line}` : line;
    if (next.length <= room || !page) {
      page = next;
    } else {
      pages.push(page);
      page = line;
    }
  }
  if (page) pages.push(page);
  return pages.map((p) => shorten(p, room));
}
