import type { Logger } from 'pino';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves true when the SMTP server accepted the message; never throws. */
  send(mail: Mail): Promise<boolean>;
}

export interface MailTimeouts {
  /** DNS and TCP connect. */
  connectMs: number;
  /** From the connection to the server's greeting. */
  greetingMs: number;
  /** Silence on the connection at any later point. */
  idleMs: number;
}

/**
 * Mail through the configured SMTP server (invitations). Without one, the
 * platform sends nothing and the inviter passes the link on.
 */
export function createMailer(smtpUrl: string | undefined, from: string, logger: Logger, timeouts?: MailTimeouts): Mailer | undefined {
  if (!smtpUrl) return undefined;
  const url = timeouts ? withTimeouts(smtpUrl, timeouts) : smtpUrl;
  // Loaded only when mail is configured.
  const transport = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(url, { from }));
  transport.catch(() => undefined); // reported by the first send
  return {
    async send(mail) {
      try {
        await (await transport).sendMail({ from, ...mail });
        return true;
      } catch (error) {
        logger.error({ err: error, to: mail.to }, 'could not send mail');
        return false;
      }
    },
  };
}

/** Options in the URL's query, as nodemailer reads them; the ones the URL already sets are kept, so the operator can still change them. */
function withTimeouts(smtpUrl: string, timeouts: MailTimeouts): string {
  const url = new URL(smtpUrl);
  const options = { connectionTimeout: timeouts.connectMs, greetingTimeout: timeouts.greetingMs, socketTimeout: timeouts.idleMs };
  for (const [name, value] of Object.entries(options)) if (!url.searchParams.has(name)) url.searchParams.set(name, String(value));
  return url.toString();
}
