//! The integration tests, one module per behaviour (a failing module's name says what
//! broke). They share one binary: each test binary links the whole crate, and thirty of
//! them cost minutes of linking and gigabytes of disk.

mod architecture;
mod child_servers;
mod cli_check;
mod cli_run;
mod definition_endpoints;
mod definition_fields;
mod definition_providers;
mod definition_servers;
mod definition_tools;
mod discovery_corpus;
mod discovery_depth;
mod discovery_files;
mod discovery_links;
mod discovery_names;
mod discovery_precedence;
mod docs;
mod faults;
mod interop_child_servers;
mod interop_clients;
mod interop_provider_sdks;
mod mock_validation;
mod output_length;
mod parsers_never_panic;
mod prompt_caching;
mod provider_errors;
mod provider_fidelity;
mod provider_round_trip;
mod provider_streaming;
mod request_oracle;
mod run_loop;
mod server_http;
mod server_protocol;
mod server_sessions;
mod session_lifecycle;
mod skills_registry;
mod soak;
