// agui-page.mjs - Debian's Chromium, headless, uses agentrt-serve's page.
//
// Usage: node agui-page.mjs URL AGENT MESSAGE [approve]
//
// Opens URL?agent=AGENT, types MESSAGE and sends it as a person would,
// waits for the run to end, and, with "approve", clicks Allow on the
// approval the run parks on and waits for the next run.  Prints one JSON
// line: the page's text as drawn (its messages, by class) and the
// branches it lists, for the test to check.  puppeteer-core (from
// $AGUI_DIR/node_modules) drives the browser over the DevTools protocol;
// $CHROMIUM names the browser (default /usr/bin/chromium).
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.AGUI_DIR, "node_modules", "x.js"));
const puppeteer = require("puppeteer-core");

const [url, agent, message, approve] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // Root in a container has no user namespace to sandbox with.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
let failed = null;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${url}?agent=${encodeURIComponent(agent)}`);
  await page.waitForFunction((a) => [...document.querySelectorAll("#agent option")]
    .some((o) => o.selected && o.textContent === a), { timeout: 20000 }, agent);
  await page.type("#text", message);
  await page.keyboard.press("Enter");
  const idle = () => page.waitForFunction(() =>
    !document.getElementById("go").disabled &&
    document.querySelectorAll(".msg.user").length > 0 &&
    document.getElementById("status").textContent === "",
  { timeout: 30000 });
  await page.waitForFunction(() => document.getElementById("go").disabled ||
    document.querySelectorAll(".msg.assistant, .msg.ask, .msg.error").length > 0,
  { timeout: 30000 });
  await idle();
  if (approve) {
    await page.waitForSelector(".msg.ask button", { timeout: 20000 });
    const [allow] = await page.$$(".msg.ask button");
    await allow.click();
    await page.waitForFunction(() => !document.querySelector(".msg.ask") &&
      [...document.querySelectorAll(".msg.assistant")].length > 0 &&
      !document.getElementById("go").disabled, { timeout: 30000 });
  }
  const drawn = await page.evaluate(() => ({
    messages: [...document.querySelectorAll("#log .msg")].map((d) =>
      [d.className.replace("msg ", ""), d.textContent]),
    branches: [...document.querySelectorAll("#branches li")].map((l) => l.textContent),
    thread: document.getElementById("thread").textContent,
  }));
  drawn.errors = errors;
  console.log(JSON.stringify(drawn));
} catch (e) {
  failed = e;
} finally {
  await browser.close();
}
if (failed) {
  console.error(`agui-page: ${failed.message}`);
  process.exit(1);
}
