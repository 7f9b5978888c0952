import fs from 'node:fs';
import path from 'node:path';

import { findBinary, ROOT } from './_binaries.js';
import { alive, globalOptions, PODMAN, podman, run, type Ran } from './_podman.js';

// deploy/compose.yaml with deploy/compose.offline.yaml, run by podman-compose (Debian's) in the
// tests' podman storage (test/deploy/_podman.ts) under a project name of the test process's own,
// from a copy of deploy/ holding the test's .env. A project whose test process died is removed
// by the next run.

export const COMPOSE = findBinary('podman-compose');

const PREFIX = 'svcup';

export class ComposeProject {
  readonly name = `${PREFIX}${process.pid}`;
  private readonly deploy: string;
  private readonly wrapper: string;

  /** deploy/ and the Containerfile copied into `dir`, with `env` as deploy/.env. */
  constructor(dir: string, env: Record<string, string>) {
    this.deploy = path.join(dir, 'deploy');
    fs.cpSync(path.join(ROOT, 'deploy'), this.deploy, { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'Containerfile'), path.join(dir, 'Containerfile'));
    const lines = Object.entries(env).map(([k, v]) => `${k}=${v}\n`);
    fs.writeFileSync(path.join(this.deploy, '.env'), lines.join(''));
    // podman as podman-compose calls it, in the tests' storage.
    this.wrapper = path.join(dir, 'podman');
    fs.writeFileSync(
      this.wrapper,
      `#!/bin/sh\nexec ${[PODMAN!, ...globalOptions()].join(' ')} "$@"\n`,
      { mode: 0o755 },
    );
  }

  /**
   * podman-compose with both files. No health check timers: podman asks systemd for them, and
   * the CI's machine has none; the test runs the checks (`podman healthcheck run`).
   */
  compose(args: string[], timeoutMs = 120_000): Promise<Ran> {
    const files = ['compose.yaml', 'compose.offline.yaml'].flatMap((f) => [
      '-f',
      path.join(this.deploy, f),
    ]);
    return run(COMPOSE!, ['--podman-path', this.wrapper, '-p', this.name, ...files, ...args], {
      timeoutMs,
      env: { DISABLE_HC_SYSTEMD: 'true' },
    });
  }

  /** The container podman-compose runs for `service`. */
  container(service: string): string {
    return `${this.name}_${service}_1`;
  }

  /** `down -v`, then whatever it left (a failed `up` can leave its network). */
  async remove(): Promise<void> {
    await this.compose(['down', '-v'], 120_000);
    await removeProject(this.name);
  }
}

/** The containers, volumes and network of project `name`, removed. */
async function removeProject(name: string): Promise<void> {
  const label = `label=io.podman.compose.project=${name}`;
  const list = async (args: string[]) =>
    (await podman(args)).out.split('\n').filter((l) => l.trim() !== '');
  const containers = await list(['ps', '--all', '--quiet', '--filter', label]);
  if (containers.length > 0) await podman(['rm', '--force', '--time', '0', ...containers]);
  const volumes = await list(['volume', 'ls', '--quiet', '--filter', label]);
  if (volumes.length > 0) await podman(['volume', 'rm', '--force', ...volumes]);
  await podman(['network', 'rm', '--force', `${name}_default`]);
}

/** Projects of test processes that are gone (killed before their cleanup), removed. */
export async function removeOrphans(): Promise<void> {
  const r = await podman(['network', 'ls', '--format', '{{.Name}}']);
  for (const network of r.out.split('\n')) {
    const m = new RegExp(`^(${PREFIX}(\\d+))_default$`).exec(network.trim());
    if (m && !alive(Number(m[2]))) await removeProject(m[1]!);
  }
}
