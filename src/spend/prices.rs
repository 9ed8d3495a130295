//! The prices a server uses (SPEC §5.1): the built-in table (`table`), extended or
//! overridden by a `--prices` file (`litellm`). A model is looked up by its id as sent, then
//! by `provider/model`: in the file first, then in the built-in table (by id, with a date or
//! `-latest`).

use std::collections::HashMap;
use std::path::Path;

use super::litellm::read_prices;
use super::price::Price;
use super::table;

/// Prices by model.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    /// What `--prices` gave, by the file's model names.
    given: HashMap<String, Price>,
}

impl PriceTable {
    /// The built-in table alone.
    pub fn builtin() -> Self {
        PriceTable::default()
    }

    /// The built-in table with `path`'s prices over it; the error is one line naming the
    /// file and what is wrong.
    pub fn with_file(path: &Path) -> Result<Self, String> {
        Ok(PriceTable {
            given: read_prices(path)?,
        })
    }

    /// The price of `model` at `provider` (its name: `openai`, `anthropic`, `custom`…), or
    /// `None` when neither the file nor the table knows it.
    pub fn lookup(&self, provider: &str, model: &str) -> Option<Price> {
        if let Some(price) = self
            .given
            .get(model)
            .or_else(|| self.given.get(&format!("{provider}/{model}")))
        {
            return Some(price.clone());
        }
        table::find(model).map(|row| Price {
            input: row.input,
            cache_read: row.cache_read,
            cache_write: row.cache_write,
            output: row.output,
            source: row.source_text(),
        })
    }

    /// How many prices the file gave.
    pub fn given(&self) -> usize {
        self.given.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_file_comes_first_by_id_then_by_provider_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.json");
        let file = json!({
            "gpt-5.4-mini": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06},
            "gemini/gemini-3-flash-preview": {"input_cost_per_token": 5e-07,
                                              "output_cost_per_token": 3e-06},
        });
        std::fs::write(&path, file.to_string()).unwrap();
        let prices = PriceTable::with_file(&path).unwrap();
        assert_eq!(prices.given(), 2);
        let mini = prices.lookup("openai", "gpt-5.4-mini").unwrap();
        assert!(
            (mini.input - 1.0).abs() < 1e-9,
            "the file overrides the table"
        );
        assert!(mini.source.contains("prices.json"), "{}", mini.source);
        let flash = prices.lookup("gemini", "gemini-3-flash-preview").unwrap();
        assert!((flash.output - 3.0).abs() < 1e-9, "found as provider/model");
        let table = prices.lookup("openai", "gpt-5.4").unwrap();
        assert!((table.input - 2.5).abs() < 1e-9, "the rest from the table");
        assert!(
            table.source.contains("OpenAI's API pricing page"),
            "{}",
            table.source
        );
        assert_eq!(prices.lookup("custom", "mock-model"), None);
        assert_eq!(
            PriceTable::builtin().lookup("gemini", "gemini-3-flash-preview"),
            None
        );
    }
}
