// Notices named in a redirect (`?notice=token-revoked`): only these fixed
// texts can be shown, so a crafted link cannot put words on the page.
const NOTICES: Record<string, string> = {
  'signed-out': 'You have signed out.',
  'session-ended': 'Your session has ended. Sign in again.',
  registered: 'Your account is ready. Sign in to continue.',
  joined: 'You joined the workspace.',
  switched: 'Workspace switched.',
  'token-revoked': 'The API token was revoked: it stops working at once.',
  'token-enabled': 'The API token was re-enabled.',
  'token-deleted': 'The API token was deleted.',
  'application-deleted': 'The OAuth application was deleted; its tokens stop working at once.',
  'invitation-revoked': 'The invitation was revoked.',
  'logo-saved': 'The workspace logo was saved.',
  'workspace-created': 'The workspace was created.',
  'workspace-disabled': 'The workspace was disabled: its tokens stop working until it is enabled again.',
  'workspace-enabled': 'The workspace was enabled.',
  'workspace-deleted': 'The workspace was deleted.',
  'webhook-enabled': 'The webhook endpoint was enabled: new events are delivered to it again.',
  'webhook-disabled': 'The webhook endpoint was disabled: it gets no new deliveries, and its pending ones fail unsent.',
  'webhook-deleted': 'The webhook endpoint was deleted with its deliveries.',
  'webhook-redelivered': 'The delivery is queued again, with the same webhook-id.',
  'webhook-in-flight': 'An attempt of that delivery is under way; redeliver it once it has ended.',
  'session-closed': 'The session was closed: it takes no new invocations, and it can be exported as a dataset.',
  'session-reopened': 'The session was reopened.',
  'session-opened': 'The session was opened: send it a prediction with the form below.',
  'prediction-queued': 'The prediction was queued: it is listed below, with its result once the model has answered.',
  'dataset-exported': 'The dataset was exported: its files are listed below.',
  'model-registered': 'The model was registered: its sessions can be opened now.',
  'alias-set': 'The alias was set: new sessions on it run this version.',
  'alias-moved': 'The alias was moved: new sessions on it run the new version; open ones keep theirs.',
  'alias-policy-set': 'The traffic policy was set: it splits the new sessions of the alias.',
  'alias-policy-deleted': 'The traffic policy was deleted: every new session runs the alias’s version.',
  'workspace-quota-set': 'The workspace’s weight and limits were saved; executors obey them from their next call.',
};

export function noticeText(key: unknown): string | undefined {
  return typeof key === 'string' && Object.hasOwn(NOTICES, key) ? NOTICES[key] : undefined;
}
