/**
 * Management of the configuration's credentials and their authorizations; each change goes through
 * Configuration.update and is refused if it would leave nobody able to manage the hub.
 */
import type { Credential, CredentialAuthorizations, HubConfiguration } from '../../config/model.js';
import { openAuthorizations } from '../../config/model.js';
import { hubError } from '../../errors.js';
import type { ChangeOrigin, Configuration } from './configuration.js';

export interface CredentialInput {
  Name: string;
  AccessKey: string;
  Enable?: boolean | null;
  EnableControlHub?: boolean | null;
  EnableManagementAPI?: boolean | null;
  EnableDeveloperAccess?: boolean | null;
}

const credentialIn = (config: HubConfiguration, name: string) =>
  config.credentials.find((c) => c.name === name) as Credential;

export const credentialRecord = (c: Credential, withKey: boolean) => ({
  Name: c.name,
  ...(withKey ? { AccessKey: c.accessKey } : {}),
  Enable: c.enable,
  EnableControlHub: c.enableControlHub,
  EnableManagementAPI: c.enableManagementAPI,
  EnableDeveloperAccess: c.enableDeveloperAccess,
});

export const authorizationsRecord = (a: CredentialAuthorizations) => ({
  StateObjects: {
    DefaultAuthorization: a.stateObjects.defaultAuthorization,
    Authorizations: a.stateObjects.rules.map((r) => ({
      Id: r.id,
      Authorization: r.authorization,
      SentinelName: r.sentinelName,
      PackageName: r.packageName,
      Name: r.name,
    })),
  },
  Messages: {
    DefaultAuthorization: a.messages.defaultAuthorization,
    Authorizations: a.messages.rules.map((r) => ({
      Id: r.id,
      Authorization: r.authorization,
      Scope: r.scope,
      Args: r.args,
      MessageKey: r.messageKey,
    })),
  },
  Groups: {
    DefaultAuthorization: a.groups.defaultAuthorization,
    Authorizations: a.groups.rules.map((r) => ({ Id: r.id, Authorization: r.authorization, GroupName: r.groupName })),
  },
});

/** Nobody could manage the hub again: refuse the change. */
function keepManagementAccess(draft: HubConfiguration): void {
  if (!draft.credentials.some((c) => c.enable && c.enableManagementAPI)) {
    throw hubError('LastManagementCredential');
  }
}

export class Credentials {
  constructor(private readonly configuration: Configuration) {}

  /** The credential, or NotFound (404). */
  require(name: string): Credential {
    const credential = this.configuration.credential(name);
    if (!credential) throw hubError('CredentialNotFound', { credential: name });
    return credential;
  }

  list(includeAccessKeys: boolean) {
    return this.configuration.current.credentials.map((c) => credentialRecord(c, includeAccessKeys));
  }

  async upsert(input: CredentialInput, origin: ChangeOrigin) {
    const next = await this.configuration.update((draft) => {
      let credential: Credential | undefined = credentialIn(draft, input.Name);
      if (!credential) {
        credential = {
          name: input.Name,
          accessKey: input.AccessKey,
          enable: true,
          enableControlHub: false,
          enableManagementAPI: false,
          enableDeveloperAccess: false,
          authorizations: openAuthorizations(),
        };
        draft.credentials.push(credential);
      }
      credential.accessKey = input.AccessKey;
      if (input.Enable != null) credential.enable = input.Enable;
      if (input.EnableControlHub != null) credential.enableControlHub = input.EnableControlHub;
      if (input.EnableManagementAPI != null) credential.enableManagementAPI = input.EnableManagementAPI;
      if (input.EnableDeveloperAccess != null) credential.enableDeveloperAccess = input.EnableDeveloperAccess;
      keepManagementAccess(draft);
    }, origin);
    return credentialRecord(credentialIn(next, input.Name), false);
  }

  /** Refused with CredentialInUse (409) while a sentinel or package instance names it. */
  async delete(name: string, origin: ChangeOrigin): Promise<void> {
    this.require(name);
    const { sentinels } = this.configuration.current;
    const users = [
      ...sentinels.filter((s) => s.credential === name).map((s) => `sentinel '${s.name}'`),
      ...sentinels.flatMap((s) =>
        s.packages.filter((p) => p.credential === name).map((p) => `package instance '${s.name}/${p.name}'`),
      ),
    ];
    if (users.length) throw hubError('CredentialInUse', { credential: name, users: users.join(', ') });
    await this.configuration.update((draft) => {
      draft.credentials = draft.credentials.filter((c) => c.name !== name);
      keepManagementAccess(draft);
    }, origin);
  }

  authorizations(name: string) {
    return authorizationsRecord(this.require(name).authorizations);
  }

  async setAuthorizations(name: string, authorizations: CredentialAuthorizations, origin: ChangeOrigin) {
    this.require(name);
    const next = await this.configuration.update((draft) => {
      credentialIn(draft, name).authorizations = authorizations;
    }, origin);
    return authorizationsRecord(credentialIn(next, name).authorizations);
  }
}
