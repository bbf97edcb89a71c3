import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import { PlatformError } from '../../common/errors.js';
import { WORKER_AUTH_CONFIG, type WorkerAuthConfig } from './worker-auth.options.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Sends WorkerAuth's mails through SMTP_URL (nodemailer). Without SMTP_URL (the embedded default) the mail
 * is written to the log instead, so a single-machine install can still log in: the link is in the log.
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger('WorkerAuth');
  /**
   * Created on the first mail: nodemailer is not loaded at start (every HTTP worker would pay its load time), and
   * the transport opens no connection before a mail anyway.
   */
  private transport: Promise<Transporter> | null = null;

  constructor(@Inject(WORKER_AUTH_CONFIG) private readonly options: WorkerAuthConfig) {}

  get delivery(): 'smtp' | 'log' {
    return this.options.smtpUrl ? 'smtp' : 'log';
  }

  async send(message: MailMessage, logLine: string): Promise<void> {
    const smtpUrl = this.options.smtpUrl;
    if (!smtpUrl) {
      this.logger.log(`No SMTP_URL: mail to ${message.to} not sent. ${logLine}`);
      return;
    }
    try {
      this.transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(smtpUrl));
      await (await this.transport).sendMail({ from: this.options.mailFrom, ...message });
    } catch (error) {
      this.logger.error(`Mail to ${message.to} could not be sent: ${(error as Error).message}`);
      throw new PlatformError('SERVICE_UNAVAILABLE', 'The sign-in mail could not be sent; try again later');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    (await this.transport?.catch(() => null))?.close();
  }
}
