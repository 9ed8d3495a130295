//! Prices from a file in the format of LiteLLM's `model_prices_and_context_window.json`
//! (`--prices FILE`, SPEC §5.1): one object whose keys are model names (`gpt-5.4`,
//! `claude-sonnet-5`, `gemini/gemini-3-pro-preview`, `openrouter/anthropic/claude-opus-5`),
//! each an object with costs in USD per token: `input_cost_per_token`,
//! `output_cost_per_token`, `cache_read_input_token_cost`, `cache_creation_input_token_cost`,
//! beside fields this server does not read (`litellm_provider`, `mode`, `max_tokens`…).
//!
//! An entry without both an input and an output cost per token is not a price of text
//! tokens (an image, audio or embedding model; LiteLLM's `sample_spec`) and is passed over.
//! A cache cost the entry does not give is the input cost, as LiteLLM's own cost
//! calculator reads such an entry. A cost that is there but is not a non-negative number
//! refuses the whole file, naming the entry: a price misread is worse than none.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value};

use super::price::Price;
use crate::limits::PRICES_FILE_BYTES;

/// The file's key for the costs of input tokens, and so on.
const INPUT: &str = "input_cost_per_token";
const OUTPUT: &str = "output_cost_per_token";
const CACHE_READ: &str = "cache_read_input_token_cost";
const CACHE_WRITE: &str = "cache_creation_input_token_cost";
/// The entry LiteLLM's file opens with, describing the fields: no model.
const SAMPLE: &str = "sample_spec";

/// The prices `path` gives, by model name; the error says what is wrong, naming the file.
pub(super) fn read_prices(path: &Path) -> Result<HashMap<String, Price>, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("--prices {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(PRICES_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("--prices {shown}: {e}"))?;
    if bytes.len() as u64 > PRICES_FILE_BYTES {
        return Err(format!(
            "--prices {shown}: the file is larger than {} MiB, more than a price table holds",
            PRICES_FILE_BYTES / (1024 * 1024)
        ));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "--prices {shown}: not JSON ({e}); the file must be in the format of LiteLLM's \
             model_prices_and_context_window.json"
        )
    })?;
    parse_prices(&value, &shown.to_string())
}

/// The prices of `value`, a whole file named `file` in messages and sources.
pub(super) fn parse_prices(value: &Value, file: &str) -> Result<HashMap<String, Price>, String> {
    let Some(entries) = value.as_object() else {
        return Err(format!(
            "--prices {file}: the file must be one JSON object of model names, as LiteLLM's \
             model_prices_and_context_window.json is"
        ));
    };
    let mut prices = HashMap::new();
    for (model, entry) in entries {
        if model == SAMPLE {
            continue;
        }
        let Some(entry) = entry.as_object() else {
            continue;
        };
        if let Some(price) = entry_price(entry, model, file)? {
            prices.insert(model.clone(), price);
        }
    }
    Ok(prices)
}

/// One entry's price per million tokens; `None` for an entry that prices no text tokens.
fn entry_price(
    entry: &Map<String, Value>,
    model: &str,
    file: &str,
) -> Result<Option<Price>, String> {
    let cost = |field: &str| -> Result<Option<f64>, String> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_f64() {
                Some(cost) if cost.is_finite() && cost >= 0.0 => Ok(Some(cost * 1e6)),
                _ => Err(format!(
                    "--prices {file}: entry \"{model}\": {field} is {value}, not a cost in USD \
                     per token (a number, 0 or more)"
                )),
            },
        }
    };
    let (input, output, cache_read, cache_write) = (
        cost(INPUT)?,
        cost(OUTPUT)?,
        cost(CACHE_READ)?,
        cost(CACHE_WRITE)?,
    );
    let (Some(input), Some(output)) = (input, output) else {
        return Ok(None);
    };
    Ok(Some(Price {
        input,
        cache_read: cache_read.unwrap_or(input),
        cache_write: cache_write.unwrap_or(input),
        output,
        source: format!("--prices {file}, entry \"{model}\""),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn litellms_entries_become_prices_per_million_tokens() {
        let file = json!({
            "sample_spec": {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                            "litellm_provider": "one of https://docs.litellm.ai/docs/providers"},
            "claude-sonnet-5": {"input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05,
                                "cache_read_input_token_cost": 2e-07,
                                "cache_creation_input_token_cost": 2.5e-06,
                                "litellm_provider": "anthropic", "mode": "chat"},
            "gpt-5.4-mini": {"input_cost_per_token": 7.5e-07, "output_cost_per_token": 4.5e-06},
            "dall-e-3": {"input_cost_per_pixel": 1e-08, "output_cost_per_pixel": 0.0},
            "text-embedding-3-small": {"input_cost_per_token": 2e-08},
            "odd": "not an entry",
        });
        let prices = parse_prices(&file, "p.json").unwrap();
        assert_eq!(prices.len(), 2, "{prices:?}");
        let sonnet = &prices["claude-sonnet-5"];
        assert!((sonnet.input - 2.0).abs() < 1e-9 && (sonnet.output - 10.0).abs() < 1e-9);
        assert!((sonnet.cache_read - 0.2).abs() < 1e-9);
        assert!((sonnet.cache_write - 2.5).abs() < 1e-9);
        assert_eq!(sonnet.source, "--prices p.json, entry \"claude-sonnet-5\"");
        let mini = &prices["gpt-5.4-mini"];
        assert!(
            (mini.cache_read - 0.75).abs() < 1e-9,
            "no cache cost: the input cost"
        );
    }

    #[test]
    fn a_cost_that_is_no_cost_refuses_the_file_by_name() {
        for bad in [json!("3e-06"), json!(-1e-06), json!(true)] {
            let file = json!({"m": {"input_cost_per_token": bad, "output_cost_per_token": 1e-06}});
            let e = parse_prices(&file, "p.json").unwrap_err();
            assert!(e.contains("entry \"m\": input_cost_per_token is"), "{e}");
        }
        let e = parse_prices(&json!([1, 2]), "p.json").unwrap_err();
        assert!(e.contains("one JSON object of model names"), "{e}");
    }

    #[test]
    fn an_unreadable_or_oversized_file_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_prices(&dir.path().join("none.json")).unwrap_err();
        assert!(missing.starts_with("--prices "), "{missing}");
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{\"m\": ").unwrap();
        assert!(read_prices(&broken).unwrap_err().contains("not JSON"));
        let big = dir.path().join("big.json");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(PRICES_FILE_BYTES + 1).unwrap();
        assert!(read_prices(&big).unwrap_err().contains("larger than"));
    }
}
