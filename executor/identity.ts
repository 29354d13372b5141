import os from 'node:os';

/** This process's name in the attempts it records: stable while it runs, told apart from other executors' on the same host. */
export const EXECUTOR_IDENTITY = `${os.hostname()}:${process.pid}`;
