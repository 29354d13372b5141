import { AppError } from '../../../kernel/errors/errors.js';

/**
 * For forms: a mistake of the user (any 4xx the services raise) is shown on
 * the form again; anything else goes on to the error page.
 */
export function userMistake(error: unknown): AppError {
  if (error instanceof AppError && error.status < 500) return error;
  throw error;
}

/** Runs a service call; its user mistake, if any, comes back instead of being thrown. */
export async function attempt<T>(call: () => Promise<T>): Promise<{ value: T; mistake?: undefined } | { value?: undefined; mistake: AppError }> {
  try {
    return { value: await call() };
  } catch (error) {
    return { mistake: userMistake(error) };
  }
}
