/// <reference lib="dom" />
import { createRequire } from 'node:module';

import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const axeSource = require('axe-core').source as string;

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core on the page as it is and fails on any serious or critical violation, naming each
 * rule and where it broke. Lesser findings are returned for the test to report.
 */
export async function checkA11y(page: Page, where: string): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    // The page's policy refuses inline script, so axe goes in through the driver, not a tag.
    await page.evaluate(axeSource);
  }
  const violations = (await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (c: unknown, o: unknown) => Promise<{ violations: unknown[] }> };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations;
  })) as Violation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (serious.length) {
    const text = serious
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      )
      .join('\n');
    throw new Error(`accessibility violations on ${where}:\n${text}`);
  }
  return violations;
}
