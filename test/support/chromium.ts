/**
 * Debian's Chromium as the page tests launch it (GUIDE.md): headless, no sandbox (root in CI), and nothing
 * that would reach the network on its own.
 */
export const CHROMIUM = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};
