import type { Command } from 'commander';

import { cliConfig, cliLogger, type CliIo } from './io.js';

// `svc mcp --user <name>`; the server itself is in mcp-server.ts, loaded when the command runs.

export function registerMcpCommands(program: Command, io: CliIo): void {
  program
    .command('mcp')
    .description(
      "serve a person's AI-callable commands as Model Context Protocol tools on stdin/stdout (needs ai_commands)",
    )
    .requiredOption('--user <username>', 'the person the agent acts for')
    .action(async (opts: { user: string }) => {
      const [{ config, secrets }, { createAppContext }, mcp, stdio, log] = await Promise.all([
        cliConfig(io),
        import('../context.js'),
        import('./mcp-server.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        cliLogger(io),
      ]);
      const ctx = await createAppContext(config, secrets, { passive: true, log });
      try {
        const server = mcp.buildMcpServer(ctx, await mcp.personByUsername(ctx, opts.user));
        const transport = new stdio.StdioServerTransport();
        await server.connect(transport);
        // Served until the client closes the stream (or the transport closes).
        const closed = new Promise<void>((resolve) => {
          const previous = transport.onclose;
          transport.onclose = () => {
            previous?.();
            resolve();
          };
          process.stdin.once('end', () => resolve());
        });
        await closed;
      } finally {
        await ctx.close();
      }
    });
}
