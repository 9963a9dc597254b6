// The controller's options: its sweeps and grace periods, new volumes, and the Oxide API it
// talks to (settings_options.h). The token file and CA file are only named here: the backend
// reads them at start (backend/client_config.h).
#include <chrono>

#include "config/option_values.h"
#include "config/settings_options.h"
#include "config/validation.h"

namespace oxide::settings_options {

// clone-snapshot-max-age, probe-oxide-grace.
Options ControllerTimingOptions() {
  return {
      {"clone-snapshot-max-age", nullptr, "DURATION", "20m",
       "controller: a clone's temporary snapshot (csi-clone-*) older than this (by Oxide's "
       "time_created) that no unfinished operation of this replica names is deleted, at start "
       "and periodically; keep it well above the 10 min operation limit, since another replica "
       "may be using a younger one (see docs/replicas.md)",
       [](Settings& s, const std::string& v) {
         Status parsed = ParseDuration("clone-snapshot-max-age", v, std::chrono::hours(24 * 7),
                                       &s.clone_snapshot_max_age);
         if (parsed.ok() && s.clone_snapshot_max_age < std::chrono::seconds(1)) {
           return InvalidSetting("clone-snapshot-max-age", "must be at least 1s");
         }
         return parsed;
       }},
      {"probe-oxide-grace", "OXIDE_CSI_PROBE_OXIDE_GRACE", "DURATION", "60s",
       "controller: how long Oxide may fail to answer (connection errors, 5xx) before "
       "oxide_csi_oxide_api_up reads 0 and an error is logged; 0 at once (units ms, s, m, h). "
       "Probe and liveness never depend on Oxide",
       [](Settings& s, const std::string& v) {
         return ParseDuration("probe-oxide-grace", v, std::chrono::hours(24), &s.probe_oxide_grace);
       }},
  };
}

// default-volume-size-gib, advertise-csi-version.
Options ControllerVolumeOptions() {
  return {
      IntOption("default-volume-size-gib", "10",
                "size of a volume whose CreateVolume gives no capacity range (1-1023)", 1, 1023,
                &Settings::default_volume_size_gib),
      {"advertise-csi-version", nullptr, "1.12|1.10", "1.12",
       "controller: newest CSI version whose capabilities are advertised; 1.10 hides "
       "GET_SNAPSHOT from clients that reject capabilities they do not know (GetSnapshot is "
       "served either way)",
       [](Settings& s, const std::string& v) {
         if (v == "1.12")
           s.advertised_csi_minor = 12;
         else if (v == "1.10")
           s.advertised_csi_minor = 10;
         else
           return InvalidSetting("advertise-csi-version", "\"" + v + "\" is not one of 1.12, 1.10");
         return Status::Ok();
       }},
  };
}

// oxide-host, oxide-project, oxide-token-file, oxide-ca-file, oxide-insecure.
Options OxideApiOptions() {
  return {
      {"oxide-host", "OXIDE_HOST", "URL", "(required for the controller)",
       "Oxide silo API address, https://...",
       [](Settings& s, const std::string& v) {
         if (v.rfind("https://", 0) != 0 && v.rfind("http://", 0) != 0) {
           return InvalidSetting("oxide-host", "\"" + v + "\" must start with https://");
         }
         s.oxide_host = v;
         while (!s.oxide_host.empty() && s.oxide_host.back() == '/')
           s.oxide_host.pop_back();
         return Status::Ok();
       }},
      {"oxide-project", "OXIDE_PROJECT", "NAME|ID", "(required for the controller)",
       "Oxide project that holds the volumes",
       [](Settings& s, const std::string& v) {
         std::string problem = IsUuid(v) ? "" : OxideNameProblem(v);
         if (!problem.empty()) return InvalidSetting("oxide-project", "\"" + v + "\": " + problem);
         s.oxide_project = IsUuid(v) ? ToLower(v) : v;
         return Status::Ok();
       }},
      {"oxide-token-file", "OXIDE_TOKEN_FILE", "PATH", "(or OXIDE_TOKEN)",
       "file holding the Oxide API token; the token itself is read only from OXIDE_TOKEN or "
       "this file, never from the command line; the file is watched, so a rotated token is used "
       "without a restart (OXIDE_TOKEN is read once)",
       [](Settings& s, const std::string& v) {
         // Read at start by the backend (backend/client_config.h); an empty path is the
         // unreadable file it always was.
         if (v.empty())
           return InvalidSetting("oxide-token-file", "cannot read the Oxide token file ");
         s.oxide_token_file = v;
         s.oxide_token_file_from_env = false;  // a flag; ParseCommandLine marks the variable's
         return Status::Ok();
       }},
      {"oxide-ca-file", nullptr, "PATH", "(system CA bundle)",
       "PEM bundle of the CA that signed the Oxide API certificate",
       [](Settings& s, const std::string& v) {
         // Checked for reading at start by the backend (backend/client_config.h).
         if (v.empty()) return InvalidSetting("oxide-ca-file", "cannot read ");
         s.oxide_ca_file = v;
         return Status::Ok();
       }},
      SwitchOption("oxide-insecure", nullptr, "false",
                   "TESTS ONLY: skip TLS verification and allow http:// Oxide hosts",
                   &Settings::oxide_insecure),
  };
}

}  // namespace oxide::settings_options
