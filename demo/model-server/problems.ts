/** The request cannot be served as sent: answered 400 with the message. */
export class BadInferenceRequest extends Error {
  readonly status = 400;
}

/** The model failed while running: answered 500 with the message. */
export class ModelFailure extends Error {
  readonly status = 500;
}
