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

/**
 * Mail through the configured SMTP server (invitations). Without one, the
 * platform sends nothing and the inviter passes the link on.
 */
export function createMailer(smtpUrl: string | undefined, from: string, logger: Logger): Mailer | undefined {
  if (!smtpUrl) return undefined;
  // Loaded only when mail is configured.
  const transport = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl, { from }));
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
