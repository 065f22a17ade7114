/** The hub settings' port: what the hub keeps in the database rather than the configuration file. */
export interface HubSettingStore {
  /** The license as it was set (JSON text), or undefined for none. */
  license(): Promise<string | undefined>;
  setLicense(text: string): Promise<void>;
}
