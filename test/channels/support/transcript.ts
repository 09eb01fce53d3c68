// Conversations as a reader of docs/conversations/ sees them: what each farmer sent, and every message,
// "typing" and USSD screen they got, in order, with the seconds each reply took.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { ROOT_DIR } from "../../../src/config.js";
import type { Conversation, Turn } from "./conversation.js";

export const TRANSCRIPTS_DIR = path.join(ROOT_DIR, "docs", "conversations");

/** Telegram's HTML and WhatsApp's *bold* as Markdown; every line quoted. */
function quoted(text: string): string {
  const markdown = text
    .replace(/<b>(.*?)<\/b>/gs, "**$1**")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/(^|\s)\*([^*\n]+)\*(?=\s|$)/g, "$1**$2**");
  return markdown
    .split("\n")
    .map((line) => (line ? `> ${line}` : ">"))
    .join("\n");
}

function turnText(turn: Turn, farmer: string, since: number | undefined): string {
  // How long a reply took, where it is worth reading (a notice, a retry): a second or more.
  const waited = since === undefined ? 0 : turn.at - since;
  const after = waited >= 1_000 ? ` *(after ${(waited / 1000).toFixed(1)} s)*` : "";
  switch (turn.who) {
    case "farmer": {
      if (turn.button) return `**${farmer}** taps **[${turn.button}]**`;
      const photo = turn.photo ? `*[photo: ${turn.photo}]*${turn.text ? " " : ""}` : "";
      return `**${farmer}:** ${photo}${turn.text ? `“${turn.text}”` : ""}`;
    }
    case "typing":
      return `*(Telegram shows "typing…")*${after}`;
    case "service": {
      const buttons = turn.buttons
        ? `\n>\n> ${turn.buttons.map((row) => row.map((b) => `\`[${b}]\``).join(" ")).join(" ")}`
        : "";
      return `${quoted(turn.text)}${buttons}${after ? `\n>\n>${after}` : ""}`;
    }
    case "ussd": {
      const typed = turn.input.startsWith("*") ? `dials \`${turn.input}\`` : `types \`${turn.input}\``;
      const screen = ["```", turn.screen, "```"].join("\n");
      return `**${farmer}** ${typed}\n\n${screen}${turn.end ? "\n\n*(the session ends)*" : ""}`;
    }
  }
}

export function transcriptMarkdown(title: string, intro: string, conversations: Conversation[]): string {
  const parts = [`# ${title}`, "", intro, ""];
  for (const conversation of conversations) {
    parts.push(`## ${conversation.title}`, "", conversation.about, "");
    let lastFarmer: number | undefined;
    for (const turn of conversation.turns()) {
      const since = turn.who === "service" || turn.who === "typing" ? lastFarmer : undefined;
      if (turn.who === "farmer") lastFarmer = turn.at;
      parts.push(turnText(turn, conversation.title.split(",")[0]!, since), "");
    }
  }
  return `${parts.join("\n").trimEnd()}\n`;
}

export async function writeTranscript(file: string, markdown: string): Promise<void> {
  await writeFile(path.join(TRANSCRIPTS_DIR, file), markdown);
}
