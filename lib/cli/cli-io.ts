/** Where the CLI writes and whether it may ask: the process' streams, replaced in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Whether stdin and stdout are a terminal, so a question can be asked and answered. */
  interactive: boolean;
  /** Asks one question on the terminal; resolves with the answer line. */
  ask(question: string): Promise<string>;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  ask: async (question) => {
    const { createInterface } = await import('node:readline/promises');
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return await prompt.question(question);
    } finally {
      prompt.close();
    }
  },
};
