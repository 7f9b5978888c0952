import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodTypeAny } from 'zod';

import { personWithoutSession, type UserActor } from '../auth/actor.js';
import type { AppContext } from '../context.js';
import { AppError, featureDisabled, notFound } from '../errors.js';
import { findAccountByUsernameKey } from '../services/accounts/queries.js';
import { lookupKey } from '../services/accounts/username.js';
import type { ArgDef } from '../services/commands/types.js';
import { readVersion } from '../version.js';

// `svc mcp --user <name>`: a person's AI-callable commands as Model Context Protocol tools over
// stdio, for agent clients on the server's host. Every call is executeCommand with the AGENT
// initiator for that person: the same checks, confirmation round trip and audit as GraphQL.

/** The person `svc mcp` acts for: never on an operator session, so no instance moderation. */
export async function personByUsername(ctx: AppContext, username: string): Promise<UserActor> {
  const row = await findAccountByUsernameKey(ctx.db.kysely, lookupKey(username.replace(/^@/, '')));
  if (!row) throw notFound(`account "@${username}"`);
  return personWithoutSession(row);
}

function argSchema(a: ArgDef): ZodTypeAny {
  const base =
    a.type === 'boolean'
      ? z.boolean()
      : a.type === 'integer' || a.type === 'number'
        ? z.number()
        : z.string();
  const described = base.describe(a.description);
  return a.required ? described : described.optional();
}

/** The MCP server of one person: a tool per AI-callable built-in, and `discover`. */
export function buildMcpServer(ctx: AppContext, person: UserActor): McpServer {
  if (!ctx.featureEnabled('ai_commands')) throw featureDisabled('ai_commands');
  const commands = ctx.services.commands;
  const server = new McpServer({ name: 'svc', version: readVersion() });
  const answer = (value: unknown) => ({
    content: [{ type: 'text' as const, text: JSON.stringify(value) }],
  });
  const failure = (err: unknown) => {
    if (!(err instanceof AppError)) throw err;
    return {
      isError: true,
      content: [
        { type: 'text' as const, text: JSON.stringify({ code: err.code, message: err.message }) },
      ],
    };
  };
  // A fresh actor per request: Authz remembers memberships on the actor object for as long as
  // it lives (a request, normally), and this server lives for the whole session; a role changed
  // meanwhile must count at the next list or call.
  const fresh = (): UserActor => ({ ...person });
  const context = {
    serverId: z.string().optional().describe('the workspace id'),
    conversationId: z.string().optional().describe('the conversation (channel) id'),
  };
  const tools = new Map<string, RegisteredTool>();
  for (const cmd of commands.registry.allBuiltins()) {
    if (!cmd.aiCallable) continue;
    const shape: Record<string, ZodTypeAny> = { ...context };
    for (const a of cmd.args) shape[a.name] = argSchema(a);
    if (cmd.destructive) {
      shape.confirmationToken = z
        .string()
        .optional()
        .describe('the token of a CONFIRMATION_REQUIRED answer, once the person agreed');
    }
    const tool = server.registerTool(
      cmd.name,
      {
        description: `${cmd.nlDescription ?? cmd.description}${
          cmd.destructive
            ? ' Destructive: the first call answers CONFIRMATION_REQUIRED with a summary to show the person and a token.'
            : ''
        }`,
        inputSchema: shape,
        annotations: { destructiveHint: cmd.destructive },
      },
      async (input: Record<string, unknown>) => {
        const { serverId, conversationId, confirmationToken, ...args } = input;
        try {
          const res = await commands.run.execute(fresh(), {
            command: cmd.name,
            args,
            context: { serverId, conversationId },
            initiator: 'AGENT',
            confirmationToken,
          });
          return answer({
            status: res.status,
            message: res.message,
            messageId: res.messageId,
            confirmation: res.confirmation && {
              ...res.confirmation,
              expiresAt: new Date(res.confirmation.expiresAt).toISOString(),
            },
          });
        } catch (err) {
          return failure(err);
        }
      },
    );
    tools.set(cmd.name, tool);
  }
  const discover = server.registerTool(
    'discover',
    {
      description: 'Which of the tools fit a request in words, best first.',
      inputSchema: { query: z.string().describe('what the person wants done'), ...context },
    },
    async (input: { query: string; serverId?: string; conversationId?: string }) => {
      try {
        const found = await commands.run.discover(fresh(), input.query, {
          serverId: input.serverId,
          conversationId: input.conversationId,
        });
        return answer(found.map((f) => ({ tool: f.command.name, score: f.score })));
      } catch (err) {
        return failure(err);
      }
    },
  );
  tools.set('discover', discover);
  // tools/list offers only what the person's roles let an agent run somewhere now (read on every
  // list: a promotion or removal shows on the next one). Every tool stays callable, so a call
  // of one not listed still reaches executeCommand and gets its refusal and audit row: the
  // list is a courtesy, the run-time check is the boundary. This replaces the SDK's own handler
  // (which lists every enabled tool) with the same rendering of the input schemas.
  server.server.setRequestHandler(ListToolsRequestSchema, async () => {
    const runnable = new Set((await commands.run.agentRunnable(fresh())).map((c) => c.name));
    return {
      tools: [...tools]
        .filter(([name]) => name === 'discover' || runnable.has(name))
        .map(([name, t]) => ({
          name,
          description: t.description,
          inputSchema: (t.inputSchema
            ? toJsonSchemaCompat(t.inputSchema, { strictUnions: true, pipeStrategy: 'input' })
            : { type: 'object', properties: {} }) as { type: 'object' },
          annotations: t.annotations,
        })),
    };
  });
  return server;
}
