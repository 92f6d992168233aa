/** Where a command's output goes: stdout for data, stderr for notes to people. Tests pass their own. */
export interface Terminal {
  /** One line of output (stdout). */
  out(line: string): void;
  /** One line for the person at the terminal (stderr): progress, what was done, what to do next. */
  note(line: string): void;
}

export const consoleTerminal: Terminal = {
  out: (line) => console.log(line),
  note: (line) => console.error(line),
};
