import nodemailer from 'nodemailer';
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
  const transport = nodemailer.createTransport(smtpUrl, { from });
  return {
    async send(mail) {
      try {
        await transport.sendMail({ from, ...mail });
        return true;
      } catch (error) {
        logger.error({ err: error, to: mail.to }, 'could not send mail');
        return false;
      }
    },
  };
}
