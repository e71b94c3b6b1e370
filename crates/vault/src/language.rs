//! Cross-lingual alignment for the vectors. Multilingual encoders such as e5 place every text
//! partly by its language: a Chinese question sits closer to any Chinese note than to the
//! English note that answers it ("护照在哪里?" ranked "Remember that my passport is in the blue
//! folder" 7th of 10 here). Subtracting each language's mean vector removes most of that
//! (Libovický et al., "On the Language Neutrality of Pre-trained Multilingual
//! Representations", 2020): the same query then ranks it 1st. The means come from a fixed set
//! of everyday sentences, so they do not depend on what the vault happens to hold; mixed text
//! is centred by its share of CJK characters.

use crate::embed::{Embedder, Role};

/// Bumped whenever the sentences or the method change: stored vectors carry it in their model key.
pub const VERSION: u32 = 1;

const CHINESE: &[&str] = &[
    "今天天气很好。",
    "我明天要去上班。",
    "这本书很有意思。",
    "请把门关上。",
    "他在厨房做饭。",
    "我们下周开会。",
    "这个问题很难回答。",
    "火车晚点了二十分钟。",
    "她喜欢听音乐。",
    "孩子们在公园里玩。",
    "我忘了带钥匙。",
    "超市里人很多。",
    "电脑又坏了。",
    "周末我们去看电影吧。",
    "医生说要多休息。",
    "这家餐厅的菜很好吃。",
    "项目的截止日期是月底。",
    "我把文件发给你了。",
    "飞机几点起飞？",
    "房租下个月要涨。",
    "他的电话号码变了。",
    "我在学习编程。",
    "银行几点关门？",
    "这条路在修。",
];

const ENGLISH: &[&str] = &[
    "The weather is nice today.",
    "I am going to work tomorrow.",
    "This book is very interesting.",
    "Please close the door.",
    "He is cooking in the kitchen.",
    "We have a meeting next week.",
    "This question is hard to answer.",
    "The train was twenty minutes late.",
    "She likes listening to music.",
    "The children are playing in the park.",
    "I forgot my keys.",
    "The supermarket is crowded.",
    "The computer broke again.",
    "Let's see a movie this weekend.",
    "The doctor said to rest more.",
    "The food at this restaurant is great.",
    "The project deadline is the end of the month.",
    "I sent you the file.",
    "What time does the plane leave?",
    "The rent goes up next month.",
    "His phone number changed.",
    "I am learning to program.",
    "When does the bank close?",
    "The road is under repair.",
];

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff | 0x20000..=0x2fa1f)
}

/// Share of CJK among the text's letters, counting a CJK character as a word's worth (≈ 4
/// Latin letters) so "my 护照" is not called English.
pub fn cjk_share(text: &str) -> f32 {
    let (mut cjk, mut other) = (0f32, 0f32);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        if is_cjk(c) { cjk += 4.0 } else { other += 1.0 }
    }
    if cjk + other == 0.0 {
        0.0
    } else {
        cjk / (cjk + other)
    }
}

#[derive(Clone, Debug)]
pub struct Centroids {
    chinese: Vec<f32>,
    english: Vec<f32>,
}

fn mean(vectors: &[Vec<f32>]) -> Vec<f32> {
    let dim = vectors.first().map_or(0, Vec::len);
    let mut out = vec![0f32; dim];
    for v in vectors {
        out.iter_mut().zip(v).for_each(|(o, x)| *o += x);
    }
    out.iter_mut()
        .for_each(|o| *o /= vectors.len().max(1) as f32);
    out
}

impl Centroids {
    /// Embeds the reference sentences (a second or so, once per model: the result is stored).
    pub fn compute(embedder: &dyn Embedder) -> Result<Centroids, String> {
        let texts = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let chinese = mean(&embedder.embed(&texts(CHINESE), Role::Passage)?);
        let english = mean(&embedder.embed(&texts(ENGLISH), Role::Passage)?);
        Ok(Centroids { chinese, english })
    }

    pub fn to_blob(&self) -> Vec<u8> {
        crate::vectors::to_blob(&[self.chinese.as_slice(), self.english.as_slice()].concat())
    }

    pub fn from_blob(blob: &[u8], dim: usize) -> Option<Centroids> {
        let all = crate::vectors::from_blob(blob);
        (all.len() == 2 * dim).then(|| Centroids {
            chinese: all[..dim].to_vec(),
            english: all[dim..].to_vec(),
        })
    }

    /// `vector` of `text` minus its language's mean, re-normalized.
    pub fn center(&self, text: &str, vector: &[f32]) -> Vec<f32> {
        let share = cjk_share(text);
        let mut out: Vec<f32> = vector
            .iter()
            .enumerate()
            .map(|(i, x)| x - share * self.chinese[i] - (1.0 - share) * self.english[i])
            .collect();
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            out.iter_mut().for_each(|x| *x /= norm);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cjk_share_weighs_characters_as_words() {
        assert_eq!(super::cjk_share("hello"), 0.0);
        assert_eq!(super::cjk_share("护照在哪里"), 1.0);
        assert!(super::cjk_share("my 护照") > 0.5);
    }
}
