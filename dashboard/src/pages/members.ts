import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, csrfField, dataTable, postButton, secretOnce, selectField, textField, timeText } from './components.js';

export interface MemberItem {
  email: string;
  name: string;
  surname: string;
  role: string;
  since: string;
}

export interface InvitationItem {
  id: number;
  email: string;
  role: string;
  expires_at: string | null;
}

export interface MembersPage {
  csrfToken: string;
  members: MemberItem[];
  pending: InvitationItem[];
  invited?: { email: string; url: string };
  draft?: { email: string; role: string };
}

const ROLES = [
  { value: 'user', label: 'user' },
  { value: 'supervisor', label: 'supervisor' },
];

export function membersBody(page: MembersPage): Html {
  return html`${page.invited ? invited(page.invited) : ''}
<section aria-labelledby="invite">
  <h2 id="invite">Invite someone</h2>
  <form class="card row-form" method="post" action="${at('/members/invitations')}">
    ${csrfField(page.csrfToken)}
    ${textField({ name: 'email', label: 'E-mail', type: 'email', value: page.draft?.email, required: true, autocomplete: 'off' })}
    ${selectField({ name: 'role', label: 'Role', choices: ROLES, value: page.draft?.role ?? 'user' })}
    <button type="submit" class="button primary">Send invitation</button>
  </form>
</section>
<section aria-labelledby="pending">
  <h2 id="pending">Pending invitations</h2>
  ${dataTable({
    caption: 'Pending invitations',
    headers: ['E-mail', 'Role', 'Expires', 'Actions'],
    rows: page.pending.map((i) => [i.email, badge(i.role), timeText(i.expires_at), revoke(i, page.csrfToken)]),
    empty: 'No pending invitations.',
  })}
</section>
<section aria-labelledby="member-list">
  <h2 id="member-list">Members</h2>
  ${dataTable({
    caption: 'Members of this workspace',
    headers: ['E-mail', 'Name', 'Role', 'Member since'],
    rows: page.members.map((m) => [m.email, `${m.name} ${m.surname}`.trim() || '—', badge(m.role), timeText(m.since)]),
    empty: 'No members.',
  })}
</section>`;
}

function invited(invitation: { email: string; url: string }): Html {
  return html`<section class="card highlight" aria-labelledby="invited">
  <h2 id="invited">Invitation for ${invitation.email} created</h2>
  <p>Send this link to ${invitation.email}. <strong>It is shown only once</strong>; it stays valid until it is used, revoked or expires.</p>
  ${secretOnce({ id: 'invitation-url', label: 'Invitation link', value: invitation.url })}
</section>`;
}

function revoke(invitation: InvitationItem, csrf: string): Html {
  return postButton({
    action: at(`/members/invitations/${invitation.id}/revoke`),
    csrf,
    label: 'Revoke',
    variant: 'danger',
    confirm: `Revoke the invitation of ${invitation.email}?`,
    accessibleLabel: `Revoke the invitation of ${invitation.email}`,
  });
}
