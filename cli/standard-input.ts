/** The first line of standard input (a secret piped in, so it shows in no process list or shell history). */
export async function firstLineOfStandardInput(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  const line = text.split(/\r?\n/)[0] ?? '';
  if (!line) throw new Error('Nothing on standard input: pipe the new password in, e.g. `printf %s "$PASSWORD" | didyma admin reset-password …`.');
  return line;
}
