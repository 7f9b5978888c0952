import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/index.js';
import { readVersion } from '../../src/version.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, expectCode, sendRaw } from '../conversations/_helpers.js';

const QUERY = `{
  serverInfo {
    version apiVersion features { key state reason } auditRetentionDays instanceNotice termsUrl
    limits {
      workspacesPerUser membersPerWorkspace channelsPerWorkspace devicesPerUser dmRequestsPerDay
      macrosPerWorkspace pipelinesPerWorkspace pluginsPerWorkspace invitesPerUserPerDay
      inviteMaxUses messageBytes pendingInvitesPerUser probationHours
    }
    signupRequiresKeys openRegistration registrationPowBits dmInbound dmOutbound dmPartners
    defaultWorkspace
  }
}`;

describe('serverInfo', () => {
  describe('with nothing configured', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => t?.close());

    it('answers every field anonymously with the defaults', async () => {
      const res = await t.gql(QUERY);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data?.serverInfo).toStrictEqual({
        version: readVersion(),
        apiVersion: 1,
        features: [
          { key: 'attachments', state: 'ENABLED', reason: null },
          { key: 'link_previews', state: 'ENABLED', reason: null },
          {
            key: 'email',
            state: 'UNAVAILABLE',
            reason: 'set SVC_SMTP_HOST and SVC_SMTP_FROM to send mail',
          },
          { key: 'custom_emoji', state: 'ENABLED', reason: null },
          { key: 'workspace_plugins', state: 'ENABLED', reason: null },
          { key: 'ai_commands', state: 'ENABLED', reason: null },
        ],
        auditRetentionDays: null,
        instanceNotice: null,
        termsUrl: null,
        limits: {
          workspacesPerUser: null,
          membersPerWorkspace: null,
          channelsPerWorkspace: null,
          devicesPerUser: 32,
          dmRequestsPerDay: 20,
          macrosPerWorkspace: null,
          pipelinesPerWorkspace: null,
          pluginsPerWorkspace: null,
          invitesPerUserPerDay: null,
          inviteMaxUses: null,
          messageBytes: null,
          pendingInvitesPerUser: 50,
          probationHours: null,
        },
        signupRequiresKeys: true,
        openRegistration: false,
        registrationPowBits: 0,
        dmInbound: 'ANYONE',
        dmOutbound: 'ANYONE',
        dmPartners: 'ANY_SERVER',
        defaultWorkspace: null,
      });
    });

    it('says the built-in maxima that apply where a cap reports null', async () => {
      const res = await t.gql(`{ __type(name: "InstanceLimits") { fields { name description } } }`);
      const about = (name: string) =>
        res.body.data!.__type.fields.find((f: { name: string }) => f.name === name).description;
      expect(about('pluginsPerWorkspace')).toMatch(
        /null when the operator\s+set no cap.*100 plugins/is,
      );
      expect(about('messageBytes')).toMatch(/null when the operator\s+set no cap.*65,536 bytes/is);

      const owner = await signUpAndIn(t);
      const ws = await createWorkspace(t, owner, 'limits');
      const channels = await t.gql(
        'query($s: ID!) { channels(serverId: $s) { id } }',
        {
          s: ws.id,
        },
        owner,
      );
      const over = expectCode(
        await sendRaw(t, owner, channels.body.data!.channels[0].id, 'a'.repeat(65537)),
        'VALIDATION',
      );
      expect(over.message).toBe(
        'message text is 65537 bytes; the limit is 65536 UTF-8 bytes (the built-in maximum; SVC_LIMIT_MESSAGE_BYTES can lower it)',
      );
    });
  });

  describe('with everything configured', () => {
    let t: TestApp;
    const notice = 'Maintenance on Sunday. '.repeat(30).slice(0, 500);
    beforeAll(async () => {
      t = await createTestApp({
        env: {
          SVC_FEATURES_DISABLED: 'link_previews,ai_commands',
          SVC_SMTP_HOST: 'smtp.example.org',
          SVC_SMTP_FROM: 'svc@example.org',
          SVC_AUDIT_RETENTION_DAYS: '90',
          SVC_INSTANCE_NOTICE: notice,
          SVC_TERMS_URL: 'https://example.org/terms',
          SVC_LIMIT_WORKSPACES_PER_USER: '3',
          SVC_LIMIT_MEMBERS_PER_WORKSPACE: '100',
          SVC_LIMIT_CHANNELS_PER_WORKSPACE: '20',
          SVC_LIMIT_DEVICES_PER_USER: '5',
          SVC_LIMIT_DM_REQUESTS_PER_DAY: '50',
          SVC_RELAY_DM_REQUESTS_PER_DAY: '7',
          SVC_LIMIT_MACROS_PER_WORKSPACE: '4',
          SVC_LIMIT_PIPELINES_PER_WORKSPACE: '6',
          SVC_LIMIT_PLUGINS_PER_WORKSPACE: '8',
          SVC_LIMIT_INVITES_PER_USER_PER_DAY: '9',
          SVC_LIMIT_INVITE_MAX_USES: '10',
          SVC_LIMIT_MESSAGE_BYTES: '4000',
          SVC_LIMIT_PENDING_INVITES_PER_USER: '0',
          SVC_PROBATION_HOURS: '24',
          SVC_SIGNUP_REQUIRE_KEYS: 'false',
          SVC_OPEN_REGISTRATION: 'true',
          SVC_REGISTRATION_POW_BITS: '12',
          SVC_DM_INBOUND: 'shared_workspace',
          SVC_DM_OUTBOUND: 'contacts',
          SVC_DM_PARTNERS: 'this_server',
          SVC_DEFAULT_WORKSPACE: '0190f3a0-0000-7000-8000-000000000001',
        },
      });
    });
    afterAll(async () => t?.close());

    it('reports each setting, the caps and the stricter of cap and relay quota', async () => {
      const info = (await t.gql(QUERY)).body.data?.serverInfo;
      expect(
        info.features.map((f: { key: string; state: string }) => `${f.key}:${f.state}`),
      ).toEqual([
        'attachments:ENABLED',
        'link_previews:DISABLED',
        'email:ENABLED',
        'custom_emoji:ENABLED',
        'workspace_plugins:ENABLED',
        'ai_commands:DISABLED',
      ]);
      expect(info.features.every((f: { reason: unknown }) => f.reason === null)).toBe(true);
      expect(info.auditRetentionDays).toBe(90);
      expect(info.instanceNotice).toBe(notice);
      expect(info.instanceNotice).toHaveLength(500);
      expect(info.termsUrl).toBe('https://example.org/terms');
      expect(info.limits).toStrictEqual({
        workspacesPerUser: 3,
        membersPerWorkspace: 100,
        channelsPerWorkspace: 20,
        // cap 5 below the relay quota 32; quota 7 below the cap 50
        devicesPerUser: 5,
        dmRequestsPerDay: 7,
        macrosPerWorkspace: 4,
        pipelinesPerWorkspace: 6,
        pluginsPerWorkspace: 8,
        invitesPerUserPerDay: 9,
        inviteMaxUses: 10,
        messageBytes: 4000,
        pendingInvitesPerUser: null,
        probationHours: 24,
      });
      expect(info.signupRequiresKeys).toBe(false);
      expect(info.openRegistration).toBe(true);
      expect(info.registrationPowBits).toBe(12);
      expect(info.dmInbound).toBe('SHARED_WORKSPACE');
      expect(info.dmOutbound).toBe('CONTACTS');
      expect(info.dmPartners).toBe('THIS_SERVER');
      expect(info.defaultWorkspace).toBe('0190f3a0-0000-7000-8000-000000000001');
    });
  });

  it('keeps devicesPerUser and dmRequestsPerDay set when the relay quota is turned off', () => {
    const limits = loadConfig({
      SVC_RELAY_DEVICES_PER_USER: '0',
      SVC_RELAY_DM_REQUESTS_PER_DAY: '0',
      SVC_LIMIT_DEVICES_PER_USER: '12',
    }).limits;
    expect(limits.devicesPerUser).toBe(12);
    expect(limits.dmRequestsPerDay).not.toBeNull();
  });

  it('refuses an instance notice over 500 characters and caps above the hard ceilings', () => {
    expect(() => loadConfig({ SVC_INSTANCE_NOTICE: 'n'.repeat(501) })).toThrow(
      /SVC_INSTANCE_NOTICE: expected at most 500 characters/,
    );
    expect(() => loadConfig({ SVC_LIMIT_MESSAGE_BYTES: '65537' })).toThrow(
      /SVC_LIMIT_MESSAGE_BYTES/,
    );
    expect(() => loadConfig({ SVC_LIMIT_PLUGINS_PER_WORKSPACE: '101' })).toThrow(
      /SVC_LIMIT_PLUGINS_PER_WORKSPACE/,
    );
    expect(() => loadConfig({ SVC_TERMS_URL: 'ftp://example.org/terms' })).toThrow(/SVC_TERMS_URL/);
  });
});
