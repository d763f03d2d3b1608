import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/**
 * Pauses and resumes topics. The flag lives in every partition (each reserve reads its own
 * slot's flag in the same atomic call that would lease), so a pause holds for every consumer
 * from the moment the call resolves; a resume wakes the consumers blocked in the home slot.
 */
export class TopicPauses {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
  ) {}

  /** Sets (true) or clears (false) the flag in every partition; true when one of them changed. */
  async set(topic: string, paused: boolean): Promise<boolean> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, paused ? 'pause' : 'resume');
    const replies = await Promise.all(
      layout.partitions.map((keys) => this.scripts.run<number>('pause', topic, keys, [paused ? 1 : 0])),
    );
    if (!paused) await this.scripts.wakeHome(layout);
    return replies.includes(1);
  }
}
