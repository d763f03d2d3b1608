import type { Command } from 'commander';
import type { FlowChildInfo, FlowNode } from '../interfaces';
import type { CliContext } from './cli-context';
import type { CliIo } from './cli-io';
import { CliFailure, EXIT } from './exit-codes';
import { inert, printJson, printTable, sealedText } from './output';
import type { CommandRunner } from './program-parts';

/** The characters of a result a text line shows (`--json` gives it whole). */
const RESULT_CHARS = 60;
const OUTCOMES = ['failed', 'pending', 'acked'] as const;

/** `flow <topic> <id>`: a flow's tree from one message down, a line per node with its state. */
export function flowCommand(program: Command, run: CommandRunner): void {
  program
    .command('flow <topic> <id>')
    .description("a flow's tree from a message down, each node with its state (exit 3 when there is none)")
    .action(run(async (ctx, topic: string, id: string) => showFlow(ctx, topic, id)));
}

async function showFlow(ctx: CliContext, topic: string, id: string): Promise<void> {
  const root = await ctx.onTopic(topic, (queue) => queue.getFlow(topic, id));
  if (!root) throw new CliFailure(`no message ${id} in ${topic}`, EXIT.notFound);
  if (ctx.options.json) return printJson(ctx.io, root);
  const lines: string[] = [];
  const states = new Map<string, number>();
  // Depth first, children in order, without recursion: a flow may be thousands of levels deep.
  const stack: [FlowNode, number][] = [[root, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next;
    states.set(node.state, (states.get(node.state) ?? 0) + 1);
    const detail = outcomeText(node);
    lines.push(
      `${'  '.repeat(depth)}${inert(`${node.topic} ${node.id}  ${node.state}${detail ? `  ${detail}` : ''}`)}`,
    );
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], depth + 1]);
  }
  const counted = [...states].map(([state, n]) => `${n} ${state}`).join(', ');
  ctx.io.out(`${lines.join('\n')}\n${lines.length} node${lines.length === 1 ? '' : 's'}: ${counted}.\n`);
}

/** A child's failure (`reason: first line of the error`) or its result (JSON, cut, or as sealed when not opened), as text. */
function outcomeText({ failure, result, sealedResult }: Pick<FlowNode, 'failure' | 'result' | 'sealedResult'>) {
  if (failure) return failure.error ? `${failure.reason}: ${failure.error.split('\n')[0]}` : failure.reason;
  if (sealedResult?.undecodable) return sealedText(sealedResult);
  if (result === undefined) return undefined;
  const text = JSON.stringify(result);
  return text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}…` : text;
}

/** A parent's children counted by outcome: `3 (1 failed, 2 acked)`. */
export function childCounts(children: FlowChildInfo[]): string {
  const counts = OUTCOMES.map((outcome) => [outcome, children.filter((c) => c.outcome === outcome).length] as const);
  const parts = counts.filter(([, n]) => n > 0).map(([outcome, n]) => `${n} ${outcome}`);
  return `${children.length} (${parts.join(', ')})`;
}

/** A parent's children as a table: topic, id, outcome, and the failure or result. */
export function printChildren(io: CliIo, children: FlowChildInfo[]): void {
  const rows = children.map((child) => ({ ...child, detail: outcomeText(child) }));
  printTable(io, rows, ['topic', 'id', 'outcome', 'detail'], 'No children.');
}
