import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { requireEnv } from './services.js';
import type { TestUser } from './platform.js';

/** Debian's Chromium, headless, with nothing that phones home; the profile is made fresh per browser. */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SCREENSHOTS = path.resolve('docs/screenshots');
/** The window the dashboard is checked in: a laptop's width. */
export const VIEWPORT = { width: 1280, height: 800 };

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** The browsers of one suite, each with its own profile, closed together. */
export class Browsers {
  private readonly open: Browser[] = [];
  private readonly executablePath = requireEnv('TEST_CHROMIUM', 'chromium');

  constructor() {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  }

  async launch(): Promise<Browser> {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: this.executablePath, headless: true, args: CHROMIUM_ARGS, viewport: VIEWPORT, acceptDownloads: true });
    context.setDefaultTimeout(15_000);
    const page = context.pages()[0] ?? (await context.newPage());
    // Destructive buttons ask for confirmation (dashboard.js): say yes.
    page.on('dialog', (dialog) => void dialog.accept());
    const browser = {
      context,
      page,
      close: async () => {
        await context.close();
        fs.rmSync(profile, { recursive: true, force: true });
      },
    };
    this.open.push(browser);
    return browser;
  }

  async closeAll(): Promise<void> {
    for (const browser of this.open.splice(0)) await browser.close();
  }
}

/** Signs in through the form; `dashboard` is the dashboard's base URL. */
export async function signIn(page: Page, dashboard: string, user: TestUser, workspace = ''): Promise<void> {
  await page.goto(`${dashboard}/sign-in`);
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByLabel('Workspace').fill(workspace);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard(\?|$)/);
}

/** Writes docs/screenshots/<name>.png, images (the brand mark, the logo) loaded. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.waitForLoadState('load');
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
}

interface Box {
  scrollWidth: number;
  clientWidth: number;
}

/**
 * What runs in the page: how far the page, and each table in its frame, is
 * wider than what shows it (no named helpers inside: only its own text is sent).
 */
function overflowIn(): { page: number; tables: number[] } {
  const { document } = globalThis as unknown as { document: { documentElement: Box; querySelectorAll(selector: string): Iterable<Box> } };
  const root = document.documentElement;
  return { page: root.scrollWidth - root.clientWidth, tables: [...document.querySelectorAll('.table-wrap')].map((box) => box.scrollWidth - box.clientWidth) };
}

/** The pixels the page, and each table, overflow by (0 when everything shows). */
export const overflowOf = (page: Page) => page.evaluate(overflowIn);
