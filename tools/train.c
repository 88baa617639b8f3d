/* tools/train.c -- the project's own small model: stories written by a generator, a
 * SentencePiece-style vocabulary learned from them, and a llama transformer trained on them
 * from scratch (forward and backward written out by hand), saved as a GGUF that infer.h runs.
 *
 *   train tales OUT.gguf [options]     corpus -> vocabulary -> training -> OUT.gguf
 *   train corpus OUT.txt [--seed S] [--stories N]
 *                                      the corpus alone, one story a line
 *   train check                        the backward pass against finite differences
 *
 * tales options (defaults in brackets, the ones `make tales` uses):
 *   --seed S [1]        one seed for everything: stories, initial weights, batches
 *   --stories N [6000]  stories generated (the last 5% are held out for the validation loss)
 *   --vocab N [1024]    vocabulary size: 3 control tokens, 256 byte tokens, the corpus's
 *                       characters, then learned merges
 *   --dim N [128] --layers N [4] --heads N [4] --ff N [384] --ctx N [256]
 *   --batch N [8] --steps N [700] --lr X [2e-3] --warmup N [40] --wd X [0.1]
 *   --threads N [all cores]  (the result does not depend on it)
 *   --type f16|f32 [f16]     the matrices' type in the file (norms are always f32)
 *   --corpus FILE            also write the corpus there
 *
 * The pipeline, top to bottom in this file:
 *   >>stories   a story generator: templates with slots (names, pronouns, places, objects,
 *               feelings, dialogue), deterministic from a seed, plain ASCII
 *   >>vocab     SentencePiece-style BPE: the text with "▁" for spaces is cut into units (a
 *               word with its leading "▁", or one other character), merges are learned inside
 *               units, and merge k gets the score -(k+1), so infer.h's tokenizer (which joins
 *               the adjacent pair whose concatenation is the highest-scored token) rebuilds
 *               the trainer's tokenization from the file alone
 *   >>model     the llama block as infer.h runs `general.architecture = llama`: RMSNorm,
 *               RoPE on (2i, 2i+1) pairs, causal multi-head attention, SwiGLU, untied output
 *   >>backward  the same steps in reverse, each the derivative of its forward line
 *   >>step      a batch across threads (one gradient buffer per sequence, summed in sequence
 *               order: the same numbers for any thread count), AdamW, cosine schedule
 *   >>export    the GGUF: llama metadata, the vocabulary, the tensors
 *
 * tests.c includes this file with TRAIN_NO_MAIN defined and checks the gradient, the export
 * and the tokenizer against infer.h. */
#ifndef INFER_IMPLEMENTATION
#define INFER_IMPLEMENTATION
#endif
#include "../infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------
 * >>util -- a seeded generator (splitmix64) and a growing byte buffer
 * ---------------------------------------------------------------------------------------- */
typedef struct train_rng { uint64_t s; } train_rng;

static uint64_t train_rng_next(train_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [0, n) */
static uint32_t train_rng_below(train_rng *r, uint32_t n) { return (uint32_t)((train_rng_next(r) >> 32) * n >> 32); }
/* uniform in (0, 1) */
static double train_rng_unit(train_rng *r) { return ((train_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
/* standard normal (Box-Muller) */
static float train_rng_normal(train_rng *r) {
    const double u = train_rng_unit(r), v = train_rng_unit(r);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

static int train_is_letter(unsigned char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }

typedef struct train_buf { char *p; size_t n, cap; } train_buf;

static int train_buf_put(train_buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}
static int train_buf_str(train_buf *b, const char *s) { return train_buf_put(b, s, strlen(s)); }

/* ------------------------------------------------------------------------------------------
 * >>stories -- children's stories from templates.
 *
 * A story has a hero and a friend (each a name, a kind -- girl, boy or an animal -- and the
 * pronouns that go with it), a place, an object, a parent, and walks through fixed stages:
 * opening, description, an outing, meeting the friend, dialogue, play, a problem, its
 * matching solution, thanks, an ending. Each stage picks one of several templates, and each
 * template has slots ({N} the hero's name, {he}/{his}/{him} the hero's pronouns, {F} and
 * {fhe}/{fhis}/{fhim} the friend's, ...) filled from the story's choices, so a name and its
 * pronouns stay the same through a story. "a~" is the indefinite article, made "a" or "an"
 * by the next word. Every word the generator can write is in the tables below
 * (train_story_tables), which is how tests check that the model writes the corpus's language.
 * ---------------------------------------------------------------------------------------- */
#define TRAIN_N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *const train_girls[] = { "Lily", "Mia", "Emma", "Sara", "Anna", "Lucy", "Ella", "Zoe", "Amy", "Rosa", "Nina",
                                           "Kate", "Ruby", "Grace", "Ivy", "Jane", "Molly", "Daisy" };
static const char *const train_boys[] = { "Tom", "Ben", "Max", "Sam", "Leo", "Jack", "Tim", "Finn", "Jake", "Noah", "Oscar",
                                          "Ted", "Luke", "Owen", "Paul", "Dan", "Billy", "Bob" };
static const char *const train_animals[] = { "cat", "dog", "bunny", "bear", "bird", "fox", "mouse", "duck", "frog", "owl",
                                             "lion", "pig", "squirrel", "turtle", "puppy", "kitten", "elephant", "horse" };
static const char *const train_kid_adjs[] = { "little", "happy", "kind", "brave", "curious", "small", "shy", "funny", "clever",
                                              "friendly", "young", "gentle", "cheerful", "playful" };
static const char *const train_animal_adjs[] = { "little", "fluffy", "small", "big", "old", "friendly", "soft", "brown", "white",
                                                 "silly", "sleepy", "orange", "gray", "tiny" };
static const char *const train_traits[] = { "kind", "brave", "curious", "shy", "funny", "smart", "helpful", "gentle", "busy", "polite",
                                            "honest", "careful" };
static const char *const train_likes[] = { "run", "jump", "sing", "dance", "draw pictures", "read books", "climb trees",
                                           "look at the stars", "play outside", "build sand castles", "pick flowers",
                                           "swim in the lake", "ride a bike", "bake cookies", "fly a kite", "play games" };
static const char *const train_parents[] = { "mom", "dad", "grandma", "grandpa", "big sister", "big brother" };
static const char *const train_places[] = { "park", "forest", "garden", "beach", "farm", "hill", "meadow", "zoo", "town",
                                            "playground", "woods", "field", "river bank", "school yard" };
static const char *const train_place_adjs[] = { "big", "green", "quiet", "sunny", "pretty", "little", "busy", "old", "happy", "warm" };
static const char *const train_objects[] = { "ball", "kite", "hat", "toy car", "teddy bear", "doll", "boat", "book", "drum",
                                             "balloon", "shoe", "cup", "box", "rope", "whistle", "bell", "scarf", "toy train" };
static const char *const train_object_adjs[] = { "red", "blue", "shiny", "big", "little", "new", "yellow", "green", "soft",
                                                 "pretty", "round", "special", "purple", "old" };
static const char *const train_waters[] = { "pond", "river", "lake", "puddle", "stream" };
static const char *const train_hides[] = { "big rock", "old bench", "pile of leaves", "green bush", "tall tree", "wooden box",
                                           "sleeping dog", "blue car" };
static const char *const train_goods[] = { "happy", "glad", "proud", "excited", "thankful", "joyful" };
static const char *const train_bads[] = { "sad", "scared", "worried", "upset", "lonely" };
static const char *const train_times[] = { "One day", "One morning", "One afternoon", "One sunny day", "One summer day",
                                           "One evening", "One warm day" };
static const char *const train_weathers[] = { "sunny", "warm", "windy", "bright", "cool", "lovely" };
static const char *const train_togethers[] = { "played tag", "built a big tower", "sang songs", "looked for shells",
                                               "ran up and down the hill", "had a picnic", "played hide and seek",
                                               "drew funny pictures", "made a small house out of sticks" };
static const char *const train_lessons[] = { "friends always help each other", "it is good to share",
                                             "being kind makes everyone happy", "it is fun to play together",
                                             "a good friend is always there for you", "you should never give up" };
static const char *const train_kids[] = { "boy", "girl" }; /* by train_story.she */
/* he/she, his/her, him/her; capitalised forms are the first letter upper-cased */
static const char *const train_pronouns[] = { "he", "his", "him", "she", "her", "her" };

static const char *const train_openings[] = {
    "Once upon a time, there was a~ {hadj} {hkind} named {N}.",
    "Once upon a time, in a~ {padj} town, there lived a~ {hadj} {hkind} named {N}.",
    "Once upon a time, there was a~ {hkind} called {N}. {He} was {trait} and {trait2}.",
    "Once upon a time, a~ {hadj} {hkind} named {N} lived in a~ {padj} house.",
};
static const char *const train_describes[] = {
    "{He} loved to {like}.",
    "{N} was very {trait}.",
    "{N} had a~ {oadj} {obj}. {He} loved {his} {obj} very much.",
    "Every day, {N} liked to play in the {place}.",
    "{His} favorite toy was a~ {oadj} {obj}.",
    "{N} lived with {his} {parent} near the {place}.",
    "{He} liked to {like} with {his} {parent}.",
};
static const char *const train_outings[] = {
    "{Time}, {N} went to the {place} with {his} {obj}.",
    "{Time}, {N} and {his} {parent} went to the {place}.",
    "{Time}, {N} wanted to {like}, so {he} went to the {place}.",
    "{Time}, {N} took {his} {oadj} {obj} and went out to play.",
};
static const char *const train_weather_lines[] = {
    "The sun was shining and the birds were singing.",
    "It was a~ {weather} day.",
    "The sky was blue and the air was {weather}.",
};
static const char *const train_meetings[] = {
    "There, {he} saw a~ {fadj} {fkind} named {F}.",
    "At the {place}, {N} met a~ {fadj} {fkind}. {fHe} said {fhis} name was {F}.",
    "Soon {N} saw a~ {fadj} {fkind} sitting under a tree. The {fkind} was called {F}.",
};
static const char *const train_dialogues[] = {
    "\"Hello, {F}!\" said {N}. \"Do you want to play with me?\" {F} smiled and said, \"Yes, I would love to!\"",
    "\"Hi, {N}!\" said {F}. \"What are you doing?\" \"I want to {like},\" said {N}. \"Can I come too?\" asked {F}. "
    "\"Yes, of course!\" said {N}.",
    "{F} looked at the {obj} and said, \"Wow, what a~ {oadj} {obj}!\" \"Thank you,\" said {N}. \"You can play with it too.\"",
    "\"Will you be my friend?\" asked {F}. {N} smiled. \"Yes, I will be your friend,\" {he} said.",
};
static const char *const train_plays[] = {
    "{N} and {F} played together all day.",
    "They ran and jumped and laughed.",
    "They played with the {obj} in the {place}.",
    "Together, they {together}.",
};
/* each problem has its own solutions: train_solutions[i] answers train_problems[i] */
static const char *const train_problems[] = {
    "But then, the {obj} fell into the {water}.",
    "Suddenly, a big wind came and blew the {obj} up into a tall tree.",
    "But when {N} looked around, {his} {obj} was gone.",
    "Then {N} tripped on a rock and fell down.",
};
static const char *const train_worries[] = {
    "{N} felt very {bad}.",
    "{He} started to cry.",
    "\"Oh no!\" cried {N}.",
    "{N} did not know what to do.",
};
static const char *const train_solutions[][2] = {
    { "{F} said, \"Do not worry, {N}. I will help you.\" {F} used a long stick to get the {obj} out of the {water}.",
      "{F} jumped into the {water} and brought the {obj} back to {N}." },
    { "{F} climbed up the tree and got the {obj} back.",
      "{F} said, \"Do not be {bad}, {N}. I can get it.\" {fHe} climbed the tree and brought the {obj} down." },
    { "{F} helped {N} look for it. They looked everywhere. At last, {F} found the {obj} under a~ {hide}.",
      "\"Let us look together,\" said {F}. Soon they found the {obj} behind a~ {hide}." },
    { "{F} ran to {N} and helped {him} get up. \"Are you okay?\" asked {F}. \"Yes, I am okay now,\" said {N}.",
      "{F} gave {N} a big hug and helped {him} up. Soon {N} felt better." },
};
static const char *const train_thanks[] = {
    "{N} was so {good}. \"Thank you, {F}!\" {he} said.",
    "{N} gave {F} a big hug. \"You are a good friend,\" {he} said.",
    "\"Thank you for helping me,\" said {N}. {F} smiled.",
};
static const char *const train_endings[] = {
    "From that day on, {N} and {F} were best friends.",
    "{N} went home and told {his} {parent} all about {his} new friend, {F}.",
    "{N} learned that {lesson}.",
    "They played together until the sun went down. {N} was very {good}.",
    "And they lived happily ever after.",
};

/* every table the generator reads: the words a story can have */
typedef struct train_table { const char *const *s; int n; } train_table;
#define TRAIN_T(a) { (const char *const *)(a), (int)(sizeof(a) / sizeof(const char *)) }
static const train_table train_story_tables[] = {
    TRAIN_T(train_girls), TRAIN_T(train_boys), TRAIN_T(train_kids), TRAIN_T(train_animals), TRAIN_T(train_kid_adjs), TRAIN_T(train_animal_adjs),
    TRAIN_T(train_traits), TRAIN_T(train_likes), TRAIN_T(train_parents), TRAIN_T(train_places), TRAIN_T(train_place_adjs),
    TRAIN_T(train_objects), TRAIN_T(train_object_adjs), TRAIN_T(train_waters), TRAIN_T(train_hides), TRAIN_T(train_goods),
    TRAIN_T(train_bads), TRAIN_T(train_times), TRAIN_T(train_weathers), TRAIN_T(train_togethers), TRAIN_T(train_lessons),
    TRAIN_T(train_pronouns), TRAIN_T(train_openings), TRAIN_T(train_describes), TRAIN_T(train_outings),
    TRAIN_T(train_weather_lines), TRAIN_T(train_meetings), TRAIN_T(train_dialogues), TRAIN_T(train_plays),
    TRAIN_T(train_problems), TRAIN_T(train_worries), TRAIN_T(train_solutions), TRAIN_T(train_thanks), TRAIN_T(train_endings),
};


/* 1 if w[0..n) (letters, any case) is a word of the tables: outside the {slots}, a letter run
 * of some template or list ("a~" also stands for "an") */
static int train_story_word(const char *w, size_t n) {
    char lw[64];
    if (n == 0 || n >= sizeof lw) return 0;
    for (size_t i = 0; i < n; i++) lw[i] = (char)(w[i] | 32);
    lw[n] = 0;
    if (!strcmp(lw, "an")) return 1;
    for (int t = 0; t < TRAIN_N(train_story_tables); t++)
        for (int k = 0; k < train_story_tables[t].n; k++) {
            const char *s = train_story_tables[t].s[k];
            for (size_t i = 0; s[i];) {
                if (s[i] == '{') { const char *e = strchr(s + i, '}'); i = e ? (size_t)(e - s) + 1 : strlen(s); continue; }
                if (!train_is_letter((unsigned char)s[i])) { i++; continue; }
                size_t j = i, same = 1;
                for (; train_is_letter((unsigned char)s[j]); j++) same &= j - i < n && (s[j] | 32) == lw[j - i];
                if (same && j - i == n) return 1;
                i = j;
            }
        }
    return 0;
}

/* the choices of one story: [0] the hero, [1] the friend */
typedef struct train_story {
    const char *name[2], *kind[2], *adj[2];
    int she[2];
    const char *trait, *trait2, *like, *parent, *place, *padj, *obj, *oadj, *water, *hide, *good, *bad, *time, *weather,
        *together, *lesson;
} train_story;

#define TRAIN_PICK(r, a) ((a)[train_rng_below((r), (uint32_t)TRAIN_N(a))])

/* a character: a girl or a boy (a child's adjective) or an animal of either sex */
static void train_pick_character(train_rng *r, train_story *s, int who) {
    const uint32_t k = train_rng_below(r, 4);
    s->she[who] = (int)train_rng_below(r, 2);
    s->name[who] = s->she[who] ? TRAIN_PICK(r, train_girls) : TRAIN_PICK(r, train_boys);
    if (k < 2) {
        s->kind[who] = train_kids[s->she[who]];
        s->adj[who] = TRAIN_PICK(r, train_kid_adjs);
    } else {
        s->kind[who] = TRAIN_PICK(r, train_animals);
        s->adj[who] = TRAIN_PICK(r, train_animal_adjs);
    }
}

/* the value of slot `name` (n bytes); NULL for an unknown slot (a bug in a template) */
static const char *train_slot(const train_story *s, const char *name, size_t n, int *cap) {
    *cap = 0;
    char key[16];
    if (n >= sizeof key) return NULL;
    memcpy(key, name, n);
    key[n] = 0;
    int who = 0;
    const char *k = key;
    if (k[0] == 'f' && (!strcmp(k + 1, "he") || !strcmp(k + 1, "He") || !strcmp(k + 1, "his") || !strcmp(k + 1, "His") || !strcmp(k + 1, "him")))
        who = 1, k++;
    if (k[0] == 'H') *cap = 1;
    if (!strcmp(k, "he") || !strcmp(k, "He")) return train_pronouns[3 * s->she[who]];
    if (!strcmp(k, "his") || !strcmp(k, "His")) return train_pronouns[3 * s->she[who] + 1];
    if (!strcmp(k, "him")) return train_pronouns[3 * s->she[who] + 2];
    *cap = 0;
    if (!strcmp(k, "N")) return s->name[0];
    if (!strcmp(k, "F")) return s->name[1];
    if (!strcmp(k, "hkind")) return s->kind[0];
    if (!strcmp(k, "fkind")) return s->kind[1];
    if (!strcmp(k, "hadj")) return s->adj[0];
    if (!strcmp(k, "fadj")) return s->adj[1];
    if (!strcmp(k, "trait")) return s->trait;
    if (!strcmp(k, "trait2")) return s->trait2;
    if (!strcmp(k, "like")) return s->like;
    if (!strcmp(k, "parent")) return s->parent;
    if (!strcmp(k, "place")) return s->place;
    if (!strcmp(k, "padj")) return s->padj;
    if (!strcmp(k, "obj")) return s->obj;
    if (!strcmp(k, "oadj")) return s->oadj;
    if (!strcmp(k, "water")) return s->water;
    if (!strcmp(k, "hide")) return s->hide;
    if (!strcmp(k, "good")) return s->good;
    if (!strcmp(k, "bad")) return s->bad;
    if (!strcmp(k, "Time")) return s->time;
    if (!strcmp(k, "weather")) return s->weather;
    if (!strcmp(k, "together")) return s->together;
    if (!strcmp(k, "lesson")) return s->lesson;
    return NULL;
}

/* Appends template `t` with its slots filled, then a space. "a~"/"A~" become "a"/"an"
 * ("A"/"An") by the first letter of the word after them. Returns -1 on an unknown slot or
 * no memory. */
static int train_expand(train_buf *out, const train_story *s, const char *t) {
    char tmp[1024];
    size_t n = 0;
    for (const char *p = t; *p;) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            int cap;
            const char *v = e ? train_slot(s, p + 1, (size_t)(e - p - 1), &cap) : NULL;
            if (!v || n + strlen(v) >= sizeof tmp) return -1;
            memcpy(tmp + n, v, strlen(v));
            if (cap) tmp[n] = (char)(tmp[n] - 'a' + 'A');
            n += strlen(v);
            p = e + 1;
        } else {
            if (n + 1 >= sizeof tmp) return -1;
            tmp[n++] = *p++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((tmp[i] == 'a' || tmp[i] == 'A') && i + 2 < n && tmp[i + 1] == '~' && tmp[i + 2] == ' ') {
            const char c = i + 3 < n ? tmp[i + 3] : 'x';
            const int an = strchr("aeiouAEIOU", c) != NULL;
            if (train_buf_put(out, tmp + i, 1) < 0 || (an && train_buf_put(out, "n", 1) < 0)) return -1;
            i++; /* skip '~'; the space follows as usual */
            continue;
        }
        if (train_buf_put(out, tmp + i, 1) < 0) return -1;
    }
    return train_buf_put(out, " ", 1);
}

/* one story, one line (ends with '\n'); the same rng state gives the same story */
static int train_story_write(train_buf *out, train_rng *r) {
    train_story s;
    train_pick_character(r, &s, 0);
    do train_pick_character(r, &s, 1); while (s.name[1] == s.name[0]);
    s.trait = TRAIN_PICK(r, train_traits);
    do s.trait2 = TRAIN_PICK(r, train_traits); while (s.trait2 == s.trait);
    s.like = TRAIN_PICK(r, train_likes);
    s.parent = TRAIN_PICK(r, train_parents);
    s.place = TRAIN_PICK(r, train_places);
    s.padj = TRAIN_PICK(r, train_place_adjs);
    s.obj = TRAIN_PICK(r, train_objects);
    s.oadj = TRAIN_PICK(r, train_object_adjs);
    s.water = TRAIN_PICK(r, train_waters);
    s.hide = TRAIN_PICK(r, train_hides);
    s.good = TRAIN_PICK(r, train_goods);
    s.bad = TRAIN_PICK(r, train_bads);
    s.time = TRAIN_PICK(r, train_times);
    s.weather = TRAIN_PICK(r, train_weathers);
    s.together = TRAIN_PICK(r, train_togethers);
    s.lesson = TRAIN_PICK(r, train_lessons);
    const size_t start = out->n;
    int rc = train_expand(out, &s, TRAIN_PICK(r, train_openings));
    /* one or two descriptions, different ones */
    const uint32_t d0 = train_rng_below(r, TRAIN_N(train_describes)), d1 = train_rng_below(r, TRAIN_N(train_describes));
    rc |= train_expand(out, &s, train_describes[d0]);
    if (d1 != d0 && train_rng_below(r, 2)) rc |= train_expand(out, &s, train_describes[d1]);
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_outings));
    if (train_rng_below(r, 2)) rc |= train_expand(out, &s, TRAIN_PICK(r, train_weather_lines));
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_meetings));
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_dialogues));
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_plays));
    const uint32_t pr = train_rng_below(r, TRAIN_N(train_problems));
    rc |= train_expand(out, &s, train_problems[pr]);
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_worries));
    rc |= train_expand(out, &s, train_solutions[pr][train_rng_below(r, 2)]);
    rc |= train_expand(out, &s, TRAIN_PICK(r, train_thanks));
    const uint32_t e0 = train_rng_below(r, TRAIN_N(train_endings)), e1 = train_rng_below(r, TRAIN_N(train_endings));
    rc |= train_expand(out, &s, train_endings[e0]);
    if (e1 != e0 && train_rng_below(r, 2)) rc |= train_expand(out, &s, train_endings[e1]);
    if (rc) return -1;
    if (out->n > start) out->n--; /* the last space */
    return train_buf_put(out, "\n", 1);
}

/* n stories from `seed` */
static int train_corpus(train_buf *out, uint64_t seed, int n) {
    train_rng r = { seed * 0x2545F4914F6CDD1Dull + 1 };
    for (int i = 0; i < n; i++)
        if (train_story_write(out, &r) < 0) return -1;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * >>vocab -- a SentencePiece-style vocabulary the engine's "llama" tokenizer reads.
 *
 * Ids: 0 <unk>, 1 <s>, 2 </s>, 3..258 the byte tokens <0x00>..<0xFF> (a character with no
 * piece of its own is written as its UTF-8 bytes), then one piece per character of the
 * corpus ("▁" among them), then the learned merges. Scores: 0 for all but the merges; merge
 * k scores -(k+1).
 *
 * Encoding (train_encode) does what infer.h does for a "llama" vocabulary: the text gets
 * one leading space, every space becomes "▁" (U+2581), the text is split into UTF-8
 * characters, and while some adjacent pair's concatenation is a piece, the pair whose piece
 * has the highest score is joined (ties: the leftmost); a leftover character that is no
 * piece becomes its byte tokens. The engine runs that over the whole text; here it runs
 * unit by unit (a unit: an optional "▁" and then a run of letters, or one other character),
 * which is the same, because merges are learned inside units, so no piece spans the border
 * between two units and no pair across a border can ever join.
 *
 * Learning: count the units of the corpus, start each at its characters, and repeatedly
 * join the most frequent adjacent pair (ties: the smaller ids), as byte-pair encoding does.
 * ---------------------------------------------------------------------------------------- */
#define TRAIN_SPACE "\xE2\x96\x81" /* "▁" U+2581, SentencePiece's space */
enum { TRAIN_TOK_UNK = 0, TRAIN_TOK_BOS = 1, TRAIN_TOK_EOS = 2, TRAIN_TOK_BYTE0 = 3 };
/* GGUF token types */
enum { TRAIN_TT_NORMAL = 1, TRAIN_TT_UNKNOWN = 2, TRAIN_TT_CONTROL = 3, TRAIN_TT_BYTE = 6 };

typedef struct train_vocab {
    int n, cap;
    char **piece;     /* [n] NUL-terminated UTF-8 */
    float *score;     /* [n] */
    int32_t *type;    /* [n] GGUF token types */
    int32_t *slot;    /* open addressing, piece -> id; -1 empty */
    uint32_t mask;
} train_vocab;

static uint32_t train_hash(const char *s, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    return h;
}

static int32_t train_vocab_find(const train_vocab *v, const char *s, size_t n) {
    for (uint32_t i = train_hash(s, n) & v->mask;; i = (i + 1) & v->mask) {
        const int32_t id = v->slot[i];
        if (id < 0) return -1;
        if (strlen(v->piece[id]) == n && !memcmp(v->piece[id], s, n)) return id;
    }
}

static void train_vocab_free(train_vocab *v) {
    for (int i = 0; i < v->n; i++) free(v->piece[i]);
    free(v->piece); free(v->score); free(v->type); free(v->slot);
    memset(v, 0, sizeof *v);
}

/* room for `cap` pieces; the hash table is sized once for all of them */
static int train_vocab_init(train_vocab *v, int cap) {
    memset(v, 0, sizeof *v);
    uint32_t slots = 16;
    while (slots < 4u * (uint32_t)cap) slots *= 2;
    v->cap = cap;
    v->piece = (char **)calloc((size_t)cap, sizeof *v->piece);
    v->score = (float *)calloc((size_t)cap, sizeof *v->score);
    v->type = (int32_t *)calloc((size_t)cap, sizeof *v->type);
    v->slot = (int32_t *)malloc(slots * sizeof *v->slot);
    if (!v->piece || !v->score || !v->type || !v->slot) { train_vocab_free(v); return -1; }
    for (uint32_t i = 0; i < slots; i++) v->slot[i] = -1;
    v->mask = slots - 1;
    return 0;
}

static int32_t train_vocab_add(train_vocab *v, const char *s, size_t n, float score, int32_t type) {
    if (v->n >= v->cap) return -1;
    char *p = (char *)malloc(n + 1);
    if (!p) return -1;
    memcpy(p, s, n);
    p[n] = 0;
    const int32_t id = v->n++;
    v->piece[id] = p;
    v->score[id] = score;
    v->type[id] = type;
    uint32_t i = train_hash(s, n) & v->mask;
    while (v->slot[i] >= 0) i = (i + 1) & v->mask;
    v->slot[i] = id;
    return id;
}

/* UTF-8 length of the character a lead byte starts (a stray continuation byte: 1), as infer.h */
static int train_utf8_len(unsigned char c) {
    static const unsigned char len[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
    return len[c >> 4];
}

/* The length of the unit at s[0..n) (n > 0): "▁" + letters, "▁" + one other character,
 * letters, or one character (a "▁" followed by another "▁" is a unit alone). */
static size_t train_unit_len(const char *s, size_t n) {
    size_t i = 0;
    if (n >= 3 && !memcmp(s, TRAIN_SPACE, 3)) {
        i = 3;
        if (i == n || (n - i >= 3 && !memcmp(s + i, TRAIN_SPACE, 3))) return i;
    }
    if (train_is_letter((unsigned char)s[i])) {
        while (i < n && train_is_letter((unsigned char)s[i])) i++;
        return i;
    }
    const size_t c = (size_t)train_utf8_len((unsigned char)s[i]);
    return i + c < n ? i + c : n;
}

/* text -> the engine's SPM form: a leading "▁", each ' ' a "▁" */
static int train_spm_text(train_buf *out, const char *text, size_t n) {
    out->n = 0;
    if (train_buf_str(out, TRAIN_SPACE) < 0) return -1;
    for (size_t i = 0; i < n; i++)
        if (text[i] == ' ' ? train_buf_str(out, TRAIN_SPACE) < 0 : train_buf_put(out, text + i, 1) < 0) return -1;
    return 0;
}

/* Merges the symbols of one unit as the engine does and appends their ids. sym[] holds the
 * symbols' byte offsets into s (sym[k] .. sym[k+1]), ns of them. */
static int train_encode_unit(const train_vocab *v, const char *s, size_t n, int32_t *out, int max, int len) {
    int32_t off[64];
    int ns = 0;
    for (size_t i = 0; i < n && ns < 63;) {
        off[ns++] = (int32_t)i;
        size_t c = (size_t)train_utf8_len((unsigned char)s[i]);
        i = i + c < n ? i + c : n;
    }
    if (ns == 63) { /* an unusually long unit: emit it in 62-character pieces */
        size_t cut = (size_t)off[62];
        len = train_encode_unit(v, s, cut, out, max, len);
        return train_encode_unit(v, s + cut, n - cut, out, max, len);
    }
    off[ns] = (int32_t)n;
    for (;;) {
        int best = -1;
        float best_score = 0;
        for (int k = 0; k + 1 < ns; k++) {
            const int32_t id = train_vocab_find(v, s + off[k], (size_t)(off[k + 2] - off[k]));
            if (id >= 0 && (best < 0 || v->score[id] > best_score)) best = k, best_score = v->score[id];
        }
        if (best < 0) break;
        memmove(off + best + 1, off + best + 2, sizeof *off * (size_t)(ns - best - 1));
        ns--;
    }
    for (int k = 0; k < ns; k++) {
        const int32_t id = train_vocab_find(v, s + off[k], (size_t)(off[k + 1] - off[k]));
        if (id >= 0) { if (len < max) out[len] = id; len++; continue; }
        for (int32_t b = off[k]; b < off[k + 1]; b++) {
            if (len < max) out[len] = TRAIN_TOK_BYTE0 + (unsigned char)s[b];
            len++;
        }
    }
    return len;
}

/* text -> ids, as infer_tokenize(..., add_special = 0) does with the exported vocabulary;
 * returns the count (only the first max are written), -1 without memory */
static int train_encode(const train_vocab *v, const char *text, size_t n, int32_t *out, int max) {
    train_buf b = { 0 };
    if (n == 0) return 0; /* no text, no leading space either */
    if (train_spm_text(&b, text, n) < 0) { free(b.p); return -1; }
    int len = 0;
    for (size_t i = 0; i < b.n;) {
        const size_t u = train_unit_len(b.p + i, b.n - i);
        len = train_encode_unit(v, b.p + i, u, out, max, len);
        i += u;
    }
    free(b.p);
    return len;
}

/* a unit of the corpus and how often it occurs, with its current symbols during learning */
typedef struct train_unit { char *s; uint32_t n; int64_t count; int32_t *sym; int nsym; } train_unit;

/* Learns a vocabulary of at most n_vocab pieces from text (lines of stories). */
static int train_vocab_learn(train_vocab *v, const char *text, size_t len, int n_vocab) {
    if (n_vocab < TRAIN_TOK_BYTE0 + 256 + 2 || train_vocab_init(v, n_vocab) < 0) return -1;
    train_vocab_add(v, "<unk>", 5, 0, TRAIN_TT_UNKNOWN);
    train_vocab_add(v, "<s>", 3, 0, TRAIN_TT_CONTROL);
    train_vocab_add(v, "</s>", 4, 0, TRAIN_TT_CONTROL);
    for (int b = 0; b < 256; b++) {
        char p[8];
        snprintf(p, sizeof p, "<0x%02X>", b);
        train_vocab_add(v, p, 6, 0, TRAIN_TT_BYTE);
    }
    /* the distinct units, counted (a table of unit indices by hash) */
    uint32_t cap = 1u << 16, mask = cap - 1;
    int32_t *tab = (int32_t *)malloc(cap * sizeof *tab);
    train_unit *units = NULL;
    int nu = 0, ucap = 0, rc = -1;
    uint32_t *pc = NULL;
    int32_t *touched = NULL;
    train_buf line = { 0 };
    if (!tab) goto done;
    for (uint32_t i = 0; i < cap; i++) tab[i] = -1;
    for (size_t at = 0; at < len;) {
        const char *nl = (const char *)memchr(text + at, '\n', len - at);
        const size_t ll = nl ? (size_t)(nl - text - at) : len - at;
        if (train_spm_text(&line, text + at, ll) < 0) goto done;
        at += ll + 1;
        for (size_t i = 0; i < line.n;) {
            const size_t u = train_unit_len(line.p + i, line.n - i);
            const char *s = line.p + i;
            i += u;
            uint32_t h = train_hash(s, u) & mask;
            while (tab[h] >= 0 && !(units[tab[h]].n == u && !memcmp(units[tab[h]].s, s, u))) h = (h + 1) & mask;
            if (tab[h] >= 0) { units[tab[h]].count++; continue; }
            if (nu >= (int)(cap / 2)) continue; /* more distinct units than the corpus should have: leave the rest out */
            if (nu == ucap) {
                ucap = ucap ? 2 * ucap : 1024;
                train_unit *nu2 = (train_unit *)realloc(units, (size_t)ucap * sizeof *units);
                if (!nu2) goto done;
                units = nu2;
            }
            train_unit *U = &units[nu];
            memset(U, 0, sizeof *U);
            U->s = (char *)malloc(u + 1);
            U->sym = (int32_t *)malloc(sizeof(int32_t) * (u + 1));
            if (!U->s || !U->sym) { free(U->s); free(U->sym); goto done; }
            memcpy(U->s, s, u);
            U->s[u] = 0;
            U->n = (uint32_t)u;
            U->count = 1;
            tab[h] = nu++;
        }
    }
    /* the characters: "▁" and printable ASCII get a piece each (anything else is left to
     * the byte tokens) */
    for (int i = 0; i < nu; i++)
        for (uint32_t k = 0; k < units[i].n;) {
            const uint32_t c = (uint32_t)train_utf8_len((unsigned char)units[i].s[k]);
            const uint32_t cl = k + c <= units[i].n ? c : units[i].n - k;
            const int is_space = cl == 3 && !memcmp(units[i].s + k, TRAIN_SPACE, 3);
            if ((is_space || (cl == 1 && units[i].s[k] > ' ' && units[i].s[k] < 127)) && train_vocab_find(v, units[i].s + k, cl) < 0 &&
                train_vocab_add(v, units[i].s + k, cl, 0, TRAIN_TT_NORMAL) < 0)
                goto done;
            k += cl;
        }
    /* the character pieces sorted by their bytes, so that the ids do not depend on unit order */
    {
        const int first = TRAIN_TOK_BYTE0 + 256, nc = v->n - first;
        for (int i = 1; i < nc; i++)
            for (int j = i; j > 0 && strcmp(v->piece[first + j - 1], v->piece[first + j]) > 0; j--) {
                char *t = v->piece[first + j]; v->piece[first + j] = v->piece[first + j - 1]; v->piece[first + j - 1] = t;
            }
        for (uint32_t i = 0; i <= v->mask; i++) v->slot[i] = -1;
        for (int id = 0; id < v->n; id++) {
            uint32_t i = train_hash(v->piece[id], strlen(v->piece[id])) & v->mask;
            while (v->slot[i] >= 0) i = (i + 1) & v->mask;
            v->slot[i] = id;
        }
    }
    /* each unit as its characters (a character with no piece keeps the unit out of learning) */
    for (int i = 0; i < nu; i++) {
        train_unit *U = &units[i];
        U->nsym = 0;
        for (uint32_t k = 0; k < U->n;) {
            const uint32_t c = (uint32_t)train_utf8_len((unsigned char)U->s[k]);
            const uint32_t cl = k + c <= U->n ? c : U->n - k;
            const int32_t id = train_vocab_find(v, U->s + k, cl);
            if (id < 0) { U->nsym = 0; break; }
            U->sym[U->nsym++] = id;
            k += cl;
        }
    }
    /* byte-pair merges: pair counts in a [cap x cap] table, reset through the list of pairs touched */
    const size_t V = (size_t)v->cap;
    pc = (uint32_t *)calloc(V * V, sizeof *pc);
    touched = (int32_t *)malloc(sizeof(int32_t) * V * V > (1u << 26) ? (1u << 26) : sizeof(int32_t) * V * V);
    if (!pc || !touched) goto done;
    for (int merge = 0; v->n < v->cap; merge++) {
        size_t nt = 0;
        for (int i = 0; i < nu; i++)
            for (int k = 0; k + 1 < units[i].nsym; k++) {
                const size_t key = (size_t)units[i].sym[k] * V + (size_t)units[i].sym[k + 1];
                if (pc[key] == 0 && nt < (1u << 24)) touched[nt++] = (int32_t)key;
                pc[key] += (uint32_t)(units[i].count > UINT32_MAX / 4 ? UINT32_MAX / 4 : units[i].count);
            }
        size_t best = 0;
        uint32_t best_n = 0;
        for (size_t t = 0; t < nt; t++) {
            const size_t key = (size_t)touched[t];
            if (pc[key] > best_n || (pc[key] == best_n && key < best)) best = key, best_n = pc[key];
            pc[key] = 0;
        }
        if (best_n < 2) break;
        const int32_t a = (int32_t)(best / V), b = (int32_t)(best % V);
        char joined[256];
        const size_t la = strlen(v->piece[a]), lb = strlen(v->piece[b]);
        if (la + lb >= sizeof joined) break;
        memcpy(joined, v->piece[a], la);
        memcpy(joined + la, v->piece[b], lb);
        int32_t id = train_vocab_find(v, joined, la + lb);
        if (id < 0 && (id = train_vocab_add(v, joined, la + lb, -(float)(merge + 1), TRAIN_TT_NORMAL)) < 0) goto done;
        for (int i = 0; i < nu; i++) {
            train_unit *U = &units[i];
            int o = 0;
            for (int k = 0; k < U->nsym; k++) {
                if (k + 1 < U->nsym && U->sym[k] == a && U->sym[k + 1] == b) { U->sym[o++] = id; k++; }
                else U->sym[o++] = U->sym[k];
            }
            U->nsym = o;
        }
    }
    rc = 0;
done:
    for (int i = 0; i < nu; i++) { free(units[i].s); free(units[i].sym); }
    free(units); free(tab); free(pc); free(touched); free(line.p);
    if (rc) train_vocab_free(v);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * >>model -- a llama transformer, its parameters in one array.
 *
 * Shapes, [rows, cols] with cols contiguous (D = dim, F = ffn, V = vocab, T = tokens):
 *   token_embd  [V, D]    blk.l.attn_norm [D]       blk.l.attn_q/k/v/output [D, D]
 *   output_norm [D]       blk.l.ffn_norm [D]        blk.l.ffn_gate/up [F, D]  ffn_down [D, F]
 *   output      [V, D]
 * A matrix W[out, in] maps x (in) to W x (out), the layout GGUF stores and infer.h reads.
 * One step for the T tokens of a sequence (every row t of x is one token):
 *   x = token_embd[ids]
 *   per layer:  a = rmsnorm(x) * attn_norm
 *               q, k, v = a Wq^T, a Wk^T, a Wv^T; rope(q), rope(k)   (pairs (2i, 2i+1) of each
 *                                                  head turn by pos * rope_base^(-2i/head_dim))
 *               per head: P = softmax(q k^T / sqrt(head_dim), causal), o = P v
 *               x = x + o Wo^T
 *               b = rmsnorm(x) * ffn_norm
 *               x = x + (silu(b Wgate^T) * (b Wup^T)) Wdown^T
 *   logits = (rmsnorm(x) * output_norm) output^T,   loss = cross-entropy(logits, next ids)
 * ---------------------------------------------------------------------------------------- */
typedef struct train_config {
    int dim, n_layers, n_heads, ffn, ctx, vocab;
    float rope_base, norm_eps;
} train_config;

/* the tensors of a layer, in the order of the parameter array */
enum { TRAIN_ATTN_NORM, TRAIN_WQ, TRAIN_WK, TRAIN_WV, TRAIN_WO, TRAIN_FFN_NORM, TRAIN_WGATE, TRAIN_WUP, TRAIN_WDOWN, TRAIN_PER_LAYER };
static const char *const train_layer_names[TRAIN_PER_LAYER] = { "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                                                "ffn_norm", "ffn_gate", "ffn_up", "ffn_down" };
/* tensor index: 0 token_embd, 1 output_norm, 2 output, then 3 + TRAIN_PER_LAYER * l + kind */
enum { TRAIN_EMBD, TRAIN_OUT_NORM, TRAIN_OUT, TRAIN_GLOBAL };

typedef struct train_tensor {
    char name[48];   /* GGUF name */
    int rows, cols;  /* rows = 1 for a vector */
    size_t off;      /* into the parameter array */
} train_tensor;

typedef struct train_model {
    train_config c;
    int n_tensors;
    train_tensor *t;
    size_t n_params;
    float *w;        /* [n_params] */
    float *rope_cos, *rope_sin; /* [ctx, head_dim / 2] */
} train_model;

#define TRAIN_TI(l, kind) (TRAIN_GLOBAL + TRAIN_PER_LAYER * (l) + (kind))

static void train_model_free(train_model *m) {
    free(m->t); free(m->w); free(m->rope_cos); free(m->rope_sin);
    memset(m, 0, sizeof *m);
}

/* the tensor table and zeroed parameters; -1 for a config that does not work */
static int train_model_create(train_model *m, const train_config *c) {
    memset(m, 0, sizeof *m);
    if (c->dim < 2 || c->n_heads < 1 || c->dim % c->n_heads || (c->dim / c->n_heads) % 2 || c->n_layers < 1 || c->ffn < 1 ||
        c->ctx < 2 || c->vocab < 3)
        return -1;
    m->c = *c;
    m->n_tensors = TRAIN_GLOBAL + TRAIN_PER_LAYER * c->n_layers;
    m->t = (train_tensor *)calloc((size_t)m->n_tensors, sizeof *m->t);
    if (!m->t) return -1;
    const int D = c->dim, F = c->ffn;
    size_t off = 0;
#define TRAIN_DEF(i, nm, r, cc) do { train_tensor *t_ = &m->t[i]; snprintf(t_->name, sizeof t_->name, "%s", nm); \
        t_->rows = (r); t_->cols = (cc); t_->off = off; off += (size_t)(r) * (size_t)(cc); } while (0)
    TRAIN_DEF(TRAIN_EMBD, "token_embd.weight", c->vocab, D);
    TRAIN_DEF(TRAIN_OUT_NORM, "output_norm.weight", 1, D);
    TRAIN_DEF(TRAIN_OUT, "output.weight", c->vocab, D);
    for (int l = 0; l < c->n_layers; l++)
        for (int k = 0; k < TRAIN_PER_LAYER; k++) {
            char nm[48];
            snprintf(nm, sizeof nm, "blk.%d.%s.weight", l, train_layer_names[k]);
            const int rows = k == TRAIN_ATTN_NORM || k == TRAIN_FFN_NORM ? 1 : k == TRAIN_WGATE || k == TRAIN_WUP ? F : D;
            const int cols = k == TRAIN_WDOWN ? F : D;
            TRAIN_DEF(TRAIN_TI(l, k), nm, rows, cols);
        }
#undef TRAIN_DEF
    m->n_params = off;
    const int half = D / c->n_heads / 2;
    m->w = (float *)calloc(off, sizeof(float));
    m->rope_cos = (float *)malloc(sizeof(float) * (size_t)c->ctx * (size_t)half);
    m->rope_sin = (float *)malloc(sizeof(float) * (size_t)c->ctx * (size_t)half);
    if (!m->w || !m->rope_cos || !m->rope_sin) { train_model_free(m); return -1; }
    /* the angles as infer.h computes them: pos * base^(-2i/head_dim), in double */
    for (int p = 0; p < c->ctx; p++)
        for (int i = 0; i < half; i++) {
            const double th = p * pow(c->rope_base, -2.0 * i / (2 * half));
            m->rope_cos[(size_t)p * half + i] = (float)cos(th);
            m->rope_sin[(size_t)p * half + i] = (float)sin(th);
        }
    return 0;
}

static float *train_w(const train_model *m, int ti) { return m->w + m->t[ti].off; }
/* tensor ti in wt, the transposed copy of the parameters */
static const float *train_wt(const train_model *m, const float *wt, int ti) { return wt + m->t[ti].off; }

/* Initial weights: norms 1; matrices N(0, sigma) with sigma = 0.02, and the two projections
 * back into the residual stream (attn_output, ffn_down) scaled by 1/sqrt(2 n_layers) so the
 * stream's variance does not grow with depth (GPT-2's scheme). */
static void train_model_init(train_model *m, uint64_t seed, float sigma) {
    train_rng r = { seed ^ 0x5DEECE66Dull };
    for (int i = 0; i < m->n_tensors; i++) {
        const train_tensor *t = &m->t[i];
        float *w = m->w + t->off;
        const size_t n = (size_t)t->rows * t->cols;
        if (t->rows == 1) { for (size_t k = 0; k < n; k++) w[k] = 1.0f; continue; }
        const int k = (i - TRAIN_GLOBAL) % TRAIN_PER_LAYER;
        const float s = i >= TRAIN_GLOBAL && (k == TRAIN_WO || k == TRAIN_WDOWN) ? sigma / sqrtf(2.0f * m->c.n_layers) : sigma;
        for (size_t j = 0; j < n; j++) w[j] = s * train_rng_normal(&r);
    }
}

/* The activations of one sequence that the backward pass reads, and its scratch. */
typedef struct train_acts {
    int T;            /* capacity in tokens */
    float *x;         /* [L+1, T, D] the residual stream into each layer; [L] the last */
    float *a, *ra;    /* [L, T, D] attention's normed input, [L, T] its 1/rms */
    float *q, *k, *v; /* [L, T, D] (q, k after rope) */
    float *p;         /* [L, H, T, T] attention probabilities: head h's [T, T] (row t: keys 0..t, then 0s) at h T^2 */
    float *o;         /* [L, T, D] attention output, heads side by side */
    float *xm;        /* [L, T, D] the stream after attention */
    float *b, *rb;    /* [L, T, D], [L, T] the FFN's normed input, its 1/rms */
    float *g, *u, *h; /* [L, T, F] gate, up, silu(gate) * up */
    float *f, *rf;    /* [T, D], [T] the final normed stream, its 1/rms */
    float *logits;    /* [T, V] */
    /* backward scratch */
    float *dx, *dn, *dq, *dk, *dv, *dO; /* [T, D] */
    float *dg, *du, *dh;                /* [T, F] */
    float *tr0;                         /* [max(D, F, V) * T] a transpose */
    float *hq, *hk, *hv, *hkt, *ho;     /* [T, head_dim] one head's slice (or its transpose) */
    float *dp, *pt;                     /* [T, T] one head's dP / dS, a transpose */
} train_acts;

static void train_acts_free(train_acts *a) {
    float **f[] = { &a->x, &a->a, &a->ra, &a->q, &a->k, &a->v, &a->p, &a->o, &a->xm, &a->b, &a->rb, &a->g, &a->u, &a->h, &a->f,
                    &a->rf, &a->logits, &a->dx, &a->dn, &a->dq, &a->dk, &a->dv, &a->dO, &a->dg, &a->du, &a->dh, &a->tr0,
                    &a->hq, &a->hk, &a->hv, &a->hkt, &a->ho, &a->dp, &a->pt };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]);
    memset(a, 0, sizeof *a);
}

static int train_acts_init(train_acts *a, const train_config *c, int T) {
    memset(a, 0, sizeof *a);
    a->T = T;
    const size_t L = (size_t)c->n_layers, D = (size_t)c->dim, F = (size_t)c->ffn, V = (size_t)c->vocab, H = (size_t)c->n_heads,
                 t = (size_t)T, big = (D > F ? D : F) > V ? (D > F ? D : F) : V;
    struct { float **p; size_t n; } sz[] = {
        { &a->x, (L + 1) * t * D }, { &a->a, L * t * D }, { &a->ra, L * t }, { &a->q, L * t * D }, { &a->k, L * t * D },
        { &a->v, L * t * D }, { &a->p, L * H * t * t }, { &a->o, L * t * D }, { &a->xm, L * t * D }, { &a->b, L * t * D },
        { &a->rb, L * t }, { &a->g, L * t * F }, { &a->u, L * t * F }, { &a->h, L * t * F }, { &a->f, t * D }, { &a->rf, t },
        { &a->logits, t * V }, { &a->dx, t * D }, { &a->dn, t * D }, { &a->dq, t * D }, { &a->dk, t * D }, { &a->dv, t * D },
        { &a->dO, t * D }, { &a->dg, t * F }, { &a->du, t * F }, { &a->dh, t * F }, { &a->tr0, big * t },
        { &a->hq, t * D }, { &a->hk, t * D }, { &a->hv, t * D }, { &a->hkt, t * D }, { &a->ho, t * D }, { &a->dp, t * t }, { &a->pt, t * t },
    };
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        if (!(*sz[i].p = (float *)calloc(sz[i].n ? sz[i].n : 1, sizeof(float)))) { train_acts_free(a); return -1; }
    return 0;
}

/* C[R, N] (+)= A[R, K] B[K, N]: the one matrix product of the forward and backward passes
 * (the forward reads the weights transposed, W^T [in, out]; dx = dy W reads W as it is;
 * dW = dy^T x transposes dy). Four rows of C by 32 columns at a time: 128 sums that stay in
 * vector registers while k runs, each step one row of B times four numbers of A, a loop the
 * compiler turns into vector multiply-adds without reordering any sum. */
static void train_matmul(float *C, const float *A, const float *B, int R, int K, int N, int acc) {
    enum { NB = 32 };
    int r = 0;
    for (; r + 4 <= R; r += 4) {
        const float *a0 = A + (size_t)r * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;
        int n = 0;
        for (; n + NB <= N; n += NB) {
            float c[4][NB];
            for (int q = 0; q < 4; q++)
                for (int j = 0; j < NB; j++) c[q][j] = acc ? C[(size_t)(r + q) * N + n + j] : 0.0f;
            for (int k = 0; k < K; k++) {
                const float *b = B + (size_t)k * N + n;
                const float x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
                for (int j = 0; j < NB; j++) {
                    c[0][j] += x0 * b[j]; c[1][j] += x1 * b[j]; c[2][j] += x2 * b[j]; c[3][j] += x3 * b[j];
                }
            }
            for (int q = 0; q < 4; q++)
                for (int j = 0; j < NB; j++) C[(size_t)(r + q) * N + n + j] = c[q][j];
        }
        for (; n < N; n++) /* the last columns, one at a time */
            for (int q = 0; q < 4; q++) {
                float z = acc ? C[(size_t)(r + q) * N + n] : 0.0f;
                for (int k = 0; k < K; k++) z += A[(size_t)(r + q) * K + k] * B[(size_t)k * N + n];
                C[(size_t)(r + q) * N + n] = z;
            }
    }
    for (; r < R; r++) /* the last rows */
        for (int n = 0; n < N; n++) {
            float z = acc ? C[(size_t)r * N + n] : 0.0f;
            for (int k = 0; k < K; k++) z += A[(size_t)r * K + k] * B[(size_t)k * N + n];
            C[(size_t)r * N + n] = z;
        }
}

/* dst[C, R] = src[R, C]^T */
static void train_transpose(float *dst, const float *src, int R, int C) {
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) dst[(size_t)c * R + r] = src[(size_t)r * C + c];
}

/* dst[T, hd] = head h's columns of src[T, D] */
static void train_head_get(float *dst, const float *src, int T, int D, int hd, int h) {
    for (int t = 0; t < T; t++) memcpy(dst + (size_t)t * hd, src + (size_t)t * D + (size_t)h * hd, sizeof(float) * hd);
}
/* head h's columns of dst[T, D] = src[T, hd] */
static void train_head_put(float *dst, const float *src, int T, int D, int hd, int h) {
    for (int t = 0; t < T; t++) memcpy(dst + (size_t)t * D + (size_t)h * hd, src + (size_t)t * hd, sizeof(float) * hd);
}

/* y = x / rms(x) * g per row; rinv[t] = 1 / rms(x_t) */
static void train_rmsnorm(float *y, float *rinv, const float *x, const float *g, int T, int D, float eps) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * D;
        double ss = 0;
        for (int i = 0; i < D; i++) ss += (double)xr[i] * xr[i];
        const float r = (float)(1.0 / sqrt(ss / D + eps));
        rinv[t] = r;
        for (int i = 0; i < D; i++) y[(size_t)t * D + i] = xr[i] * r * g[i];
    }
}

/* rotate pairs (2i, 2i+1) of every head of rows [T, D] by +angle (dir 1) or -angle (dir -1) */
static void train_rope(const train_model *m, float *x, int T, float dir) {
    const int hd = m->c.dim / m->c.n_heads, half = hd / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < m->c.n_heads; h++) {
            float *v = x + (size_t)t * m->c.dim + (size_t)h * hd;
            for (int i = 0; i < half; i++) {
                const float cs = m->rope_cos[(size_t)t * half + i], sn = dir * m->rope_sin[(size_t)t * half + i];
                const float x0 = v[2 * i], x1 = v[2 * i + 1];
                v[2 * i] = x0 * cs - x1 * sn;
                v[2 * i + 1] = x0 * sn + x1 * cs;
            }
        }
}

static float train_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* The forward pass over ids[0..T) (T <= the acts' and the model's context), with wt the
 * model's matrices transposed (train_transpose_all). Leaves the logits
 * in a->logits and everything the backward pass needs. With targets, returns the summed
 * cross-entropy of predicting targets[t] at position t (targets[t] < 0: not counted). */
static double train_forward(const train_model *m, const float *wt, train_acts *a, const int32_t *ids, const int32_t *targets, int T) {
    const train_config *c = &m->c;
    const int D = c->dim, F = c->ffn, V = c->vocab, H = c->n_heads, hd = D / H;
    const size_t TD = (size_t)T * D, TF = (size_t)T * F, AT = (size_t)a->T;
    const float scale = 1.0f / sqrtf((float)hd);
    for (int t = 0; t < T; t++) memcpy(a->x + (size_t)t * D, train_w(m, TRAIN_EMBD) + (size_t)ids[t] * D, sizeof(float) * D);
    for (int l = 0; l < c->n_layers; l++) {
        float *x = a->x + l * AT * D, *an = a->a + l * AT * D, *q = a->q + l * AT * D, *k = a->k + l * AT * D, *v = a->v + l * AT * D;
        float *o = a->o + l * AT * D, *xm = a->xm + l * AT * D, *b = a->b + l * AT * D, *P = a->p + (size_t)l * H * AT * AT;
        float *g = a->g + l * AT * F, *u = a->u + l * AT * F, *hh = a->h + l * AT * F, *xn = a->x + (l + 1) * AT * D;
        train_rmsnorm(an, a->ra + l * AT, x, train_w(m, TRAIN_TI(l, TRAIN_ATTN_NORM)), T, D, c->norm_eps);
        train_matmul(q, an, train_wt(m, wt, TRAIN_TI(l, TRAIN_WQ)), T, D, D, 0);
        train_matmul(k, an, train_wt(m, wt, TRAIN_TI(l, TRAIN_WK)), T, D, D, 0);
        train_matmul(v, an, train_wt(m, wt, TRAIN_TI(l, TRAIN_WV)), T, D, D, 0);
        train_rope(m, q, T, 1.0f);
        train_rope(m, k, T, 1.0f);
        /* per head, as products: S = q_h k_h^T (all T x T, the causal mask applied after),
         * P = softmax(S * scale) over s <= t (0 beyond), o_h = P v_h */
        for (int h = 0; h < H; h++) {
            float *Ph = P + (size_t)h * AT * AT; /* [T, T] */
            train_head_get(a->hq, q, T, D, hd, h);
            train_head_get(a->hk, k, T, D, hd, h);
            train_head_get(a->hv, v, T, D, hd, h);
            train_transpose(a->hkt, a->hk, T, hd);
            train_matmul(Ph, a->hq, a->hkt, T, hd, T, 0);
            for (int t = 0; t < T; t++) {
                float *pr = Ph + (size_t)t * T, mx = -INFINITY, sum = 0;
                for (int s2 = 0; s2 <= t; s2++) { pr[s2] *= scale; mx = pr[s2] > mx ? pr[s2] : mx; }
                for (int s2 = 0; s2 <= t; s2++) sum += (pr[s2] = expf(pr[s2] - mx));
                for (int s2 = 0; s2 <= t; s2++) pr[s2] /= sum;
                for (int s2 = t + 1; s2 < T; s2++) pr[s2] = 0;
            }
            train_matmul(a->ho, Ph, a->hv, T, T, hd, 0);
            train_head_put(o, a->ho, T, D, hd, h);
        }
        memcpy(xm, x, sizeof(float) * TD);
        train_matmul(xm, o, train_wt(m, wt, TRAIN_TI(l, TRAIN_WO)), T, D, D, 1);
        train_rmsnorm(b, a->rb + l * AT, xm, train_w(m, TRAIN_TI(l, TRAIN_FFN_NORM)), T, D, c->norm_eps);
        train_matmul(g, b, train_wt(m, wt, TRAIN_TI(l, TRAIN_WGATE)), T, D, F, 0);
        train_matmul(u, b, train_wt(m, wt, TRAIN_TI(l, TRAIN_WUP)), T, D, F, 0);
        for (size_t i = 0; i < TF; i++) hh[i] = g[i] * train_sigmoid(g[i]) * u[i];
        memcpy(xn, xm, sizeof(float) * TD);
        train_matmul(xn, hh, train_wt(m, wt, TRAIN_TI(l, TRAIN_WDOWN)), T, F, D, 1);
    }
    train_rmsnorm(a->f, a->rf, a->x + (size_t)c->n_layers * AT * D, train_w(m, TRAIN_OUT_NORM), T, D, c->norm_eps);
    train_matmul(a->logits, a->f, train_wt(m, wt, TRAIN_OUT), T, D, V, 0);
    double loss = 0;
    if (targets)
        for (int t = 0; t < T; t++) {
            if (targets[t] < 0) continue;
            const float *lg = a->logits + (size_t)t * V;
            float mx = lg[0];
            for (int i = 1; i < V; i++) mx = lg[i] > mx ? lg[i] : mx;
            double se = 0;
            for (int i = 0; i < V; i++) se += exp((double)lg[i] - mx);
            loss += log(se) + mx - lg[targets[t]];
        }
    return loss;
}

/* ------------------------------------------------------------------------------------------
 * >>backward -- the gradient of (scale * the summed loss) with respect to every parameter,
 * added into grad[n_params], after train_forward on the same ids and targets.
 *
 * Each line undoes one forward line (d is "the gradient of the loss with respect to"):
 *   cross-entropy    dlogits = scale * (softmax(logits) - onehot(target))
 *   y = x W^T        dx = dy W,  dW += dy^T x           (as products: W^T and the transposes)
 *   y = x r g        (r = 1/rms(x))  dg += sum_t dy x r,  dx = r (dy g) - x r^3 / D sum(dy g x)
 *   h = silu(g) u    du = dh silu(g),  dg = dh u s (1 + g (1 - s))    (s = sigmoid(g))
 *   rope             the gradient turns back by the same angle
 *   o = P v          dP = do v^T,  dv += P^T do
 *   P = softmax(S)   dS = P (dP - sum_s P dP),  S = q k^T scale: dq = dS k scale, dk = dS^T q scale
 *   x = embd[ids]    dembd[ids[t]] += dx[t]
 * ---------------------------------------------------------------------------------------- */

/* dx (+)= dy W; dW += dy^T x: dy [T, O], x [T, I], W [O, I] */
static void train_linear_back(train_acts *a, float *dx, int acc, float *dW, const float *dy, const float *x, const float *W, int T, int I, int O) {
    train_matmul(dx, dy, W, T, O, I, acc);
    train_transpose(a->tr0, dy, T, O); /* [O, T] */
    train_matmul(dW, a->tr0, x, O, T, I, 1);
}

/* dx (+)= the gradient through y = rmsnorm(x) * g, from dy; dg accumulates */
static void train_rmsnorm_back(float *dx, int acc, float *dg, const float *dy, const float *x, const float *rinv, const float *g, int T, int D) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * D, *dyr = dy + (size_t)t * D;
        const float r = rinv[t];
        double dot = 0;
        for (int i = 0; i < D; i++) {
            dg[i] += dyr[i] * xr[i] * r;
            dot += (double)dyr[i] * g[i] * xr[i];
        }
        const float c = (float)(dot * r * r * r / D);
        float *dxr = dx + (size_t)t * D;
        for (int i = 0; i < D; i++) {
            const float d = r * dyr[i] * g[i] - xr[i] * c;
            dxr[i] = acc ? dxr[i] + d : d;
        }
    }
}

static void train_backward(const train_model *m, train_acts *a, const int32_t *ids, const int32_t *targets, int T,
                           float scale, float *grad) {
    const train_config *c = &m->c;
    const int D = c->dim, F = c->ffn, V = c->vocab, H = c->n_heads, hd = D / H;
    const size_t AT = (size_t)a->T;
    const float sc = 1.0f / sqrtf((float)hd);
#define TRAIN_G(ti) (grad + m->t[ti].off)
#define TRAIN_WT(ti) (m->w + m->t[ti].off)
    /* cross-entropy: dlogits in place of the logits */
    for (int t = 0; t < T; t++) {
        float *lg = a->logits + (size_t)t * V;
        if (targets[t] < 0) { memset(lg, 0, sizeof(float) * V); continue; }
        float mx = lg[0];
        for (int i = 1; i < V; i++) mx = lg[i] > mx ? lg[i] : mx;
        double se = 0;
        for (int i = 0; i < V; i++) se += exp((double)lg[i] - mx);
        for (int i = 0; i < V; i++) lg[i] = (float)(exp((double)lg[i] - mx) / se) * scale;
        lg[targets[t]] -= scale;
    }
    float *xL = a->x + (size_t)c->n_layers * AT * D;
    train_linear_back(a, a->dn, 0, TRAIN_G(TRAIN_OUT), a->logits, a->f, TRAIN_WT(TRAIN_OUT), T, D, V);
    train_rmsnorm_back(a->dx, 0, TRAIN_G(TRAIN_OUT_NORM), a->dn, xL, a->rf, train_w(m, TRAIN_OUT_NORM), T, D);
    /* a->dx: the gradient of the residual stream, carried down through the layers */
    for (int l = c->n_layers - 1; l >= 0; l--) {
        float *x = a->x + l * AT * D, *an = a->a + l * AT * D, *q = a->q + l * AT * D, *k = a->k + l * AT * D, *v = a->v + l * AT * D;
        float *o = a->o + l * AT * D, *xm = a->xm + l * AT * D, *b = a->b + l * AT * D, *P = a->p + (size_t)l * H * AT * AT;
        float *g = a->g + l * AT * F, *u = a->u + l * AT * F, *hh = a->h + l * AT * F;
        /* the FFN: x_out = xm + h Wdown^T */
        train_linear_back(a, a->dh, 0, TRAIN_G(TRAIN_TI(l, TRAIN_WDOWN)), a->dx, hh, TRAIN_WT(TRAIN_TI(l, TRAIN_WDOWN)), T, F, D);
        for (size_t i = 0; i < (size_t)T * F; i++) {
            const float s = train_sigmoid(g[i]);
            a->du[i] = a->dh[i] * g[i] * s;
            a->dg[i] = a->dh[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
        }
        train_linear_back(a, a->dn, 0, TRAIN_G(TRAIN_TI(l, TRAIN_WGATE)), a->dg, b, TRAIN_WT(TRAIN_TI(l, TRAIN_WGATE)), T, D, F);
        train_linear_back(a, a->dn, 1, TRAIN_G(TRAIN_TI(l, TRAIN_WUP)), a->du, b, TRAIN_WT(TRAIN_TI(l, TRAIN_WUP)), T, D, F);
        train_rmsnorm_back(a->dx, 1, TRAIN_G(TRAIN_TI(l, TRAIN_FFN_NORM)), a->dn, xm, a->rb + l * AT, train_w(m, TRAIN_TI(l, TRAIN_FFN_NORM)), T, D);
        /* attention: xm = x + o Wo^T */
        train_linear_back(a, a->dO, 0, TRAIN_G(TRAIN_TI(l, TRAIN_WO)), a->dx, o, TRAIN_WT(TRAIN_TI(l, TRAIN_WO)), T, D, D);
        /* per head: dP = do_h v_h^T, dv_h = P^T do_h, dS = P (dP - sum_s P dP) scale,
         * dq_h = dS k_h, dk_h = dS^T q_h */
        for (int h = 0; h < H; h++) {
            const float *Ph = P + (size_t)h * AT * AT;
            train_head_get(a->ho, a->dO, T, D, hd, h);
            train_head_get(a->hv, v, T, D, hd, h);
            train_transpose(a->hkt, a->hv, T, hd);
            train_matmul(a->dp, a->ho, a->hkt, T, hd, T, 0);
            train_transpose(a->pt, Ph, T, T);
            train_matmul(a->hq, a->pt, a->ho, T, T, hd, 0);
            train_head_put(a->dv, a->hq, T, D, hd, h);
            for (int t = 0; t < T; t++) {
                const float *pr = Ph + (size_t)t * T;
                float *dpr = a->dp + (size_t)t * T;
                float sum = 0;
                for (int s2 = 0; s2 <= t; s2++) sum += pr[s2] * dpr[s2];
                for (int s2 = 0; s2 <= t; s2++) dpr[s2] = pr[s2] * (dpr[s2] - sum) * sc;
                for (int s2 = t + 1; s2 < T; s2++) dpr[s2] = 0;
            }
            train_head_get(a->hk, k, T, D, hd, h);
            train_matmul(a->hq, a->dp, a->hk, T, T, hd, 0);
            train_head_put(a->dq, a->hq, T, D, hd, h);
            train_head_get(a->hk, q, T, D, hd, h);
            train_transpose(a->pt, a->dp, T, T);
            train_matmul(a->hq, a->pt, a->hk, T, T, hd, 0);
            train_head_put(a->dk, a->hq, T, D, hd, h);
        }
        train_rope(m, a->dq, T, -1.0f);
        train_rope(m, a->dk, T, -1.0f);
        train_linear_back(a, a->dn, 0, TRAIN_G(TRAIN_TI(l, TRAIN_WQ)), a->dq, an, TRAIN_WT(TRAIN_TI(l, TRAIN_WQ)), T, D, D);
        train_linear_back(a, a->dn, 1, TRAIN_G(TRAIN_TI(l, TRAIN_WK)), a->dk, an, TRAIN_WT(TRAIN_TI(l, TRAIN_WK)), T, D, D);
        train_linear_back(a, a->dn, 1, TRAIN_G(TRAIN_TI(l, TRAIN_WV)), a->dv, an, TRAIN_WT(TRAIN_TI(l, TRAIN_WV)), T, D, D);
        train_rmsnorm_back(a->dx, 1, TRAIN_G(TRAIN_TI(l, TRAIN_ATTN_NORM)), a->dn, x, a->ra + l * AT, train_w(m, TRAIN_TI(l, TRAIN_ATTN_NORM)), T, D);
    }
    float *de = TRAIN_G(TRAIN_EMBD);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D; i++) de[(size_t)ids[t] * D + i] += a->dx[(size_t)t * D + i];
#undef TRAIN_G
#undef TRAIN_WT
}

/* wt[off(W) ...] = W^T for every matrix (vectors copied), what train_forward reads */
static void train_transpose_all(const train_model *m, float *wt) {
    for (int i = 0; i < m->n_tensors; i++) {
        const train_tensor *t = &m->t[i];
        if (t->rows == 1) memcpy(wt + t->off, m->w + t->off, sizeof(float) * t->cols);
        else train_transpose(wt + t->off, m->w + t->off, t->rows, t->cols);
    }
}

/* ------------------------------------------------------------------------------------------
 * >>step -- batches over threads, AdamW, the schedule, and the whole run (train_tales).
 * ---------------------------------------------------------------------------------------- */
typedef struct train_job {
    const train_model *m;
    const float *wt;
    const int32_t *tokens;      /* the token stream */
    const int64_t *starts;      /* [B] where each sequence of the batch starts in the stream */
    int B, T;
    float scale;
    float *grads;               /* [B, n_params], or NULL: forward only */
    double *losses;             /* [B] summed loss of each sequence */
    int64_t *counts;            /* [B] targets counted */
    train_acts *acts;           /* [threads] */
    atomic_int next;
    int failed;
} train_job;

typedef struct train_worker { train_job *job; int id; } train_worker;

static void *train_worker_run(void *arg) {
    train_worker *w = (train_worker *)arg;
    train_job *j = w->job;
    train_acts *a = &j->acts[w->id];
    for (;;) {
        const int b = atomic_fetch_add(&j->next, 1);
        if (b >= j->B) break;
        const int32_t *ids = j->tokens + j->starts[b];
        int32_t tg[1024];
        int64_t cnt = 0;
        for (int t = 0; t < j->T; t++) tg[t] = ids[t + 1], cnt++;
        j->counts[b] = cnt;
        j->losses[b] = train_forward(j->m, j->wt, a, ids, tg, j->T);
        if (j->grads) {
            float *g = j->grads + (size_t)b * j->m->n_params;
            memset(g, 0, sizeof(float) * j->m->n_params);
            train_backward(j->m, a, ids, tg, j->T, j->scale, g);
        }
    }
    return NULL;
}

/* runs the job on n_threads (the calling thread is one of them) */
static void train_run_job(train_job *j, int n_threads) {
    pthread_t th[64];
    train_worker w[64];
    int started = 0;
    atomic_store(&j->next, 0);
    if (n_threads > 64) n_threads = 64;
    for (int i = 1; i < n_threads; i++) {
        w[i].job = j;
        w[i].id = i;
        if (pthread_create(&th[i], NULL, train_worker_run, &w[i]) != 0) break;
        started = i;
    }
    w[0].job = j;
    w[0].id = 0;
    train_worker_run(&w[0]);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
}

typedef struct train_opts {
    train_config c;
    uint64_t seed;
    int stories, batch, steps, warmup, threads;
    float lr, wd;
    infer_type type;
    const char *corpus_path;
    int quiet;                  /* no progress lines on stderr */
} train_opts;

/* what a run measured */
typedef struct train_result {
    double first_loss;          /* the first batch's mean loss */
    double train_loss;          /* the final weights' mean loss on the first 64 training stories */
    double val_loss;            /* ... and on the first 64 held-out stories */
    double seconds;
    int64_t n_tokens;           /* the corpus's */
    int n_vocab;
    size_t n_params;
} train_result;

static train_opts train_default_opts(void) {
    train_opts o;
    memset(&o, 0, sizeof o);
    o.c.dim = 128; o.c.n_layers = 4; o.c.n_heads = 4; o.c.ffn = 384; o.c.ctx = 256; o.c.vocab = 1024;
    o.c.rope_base = 10000.0f; o.c.norm_eps = 1e-5f;
    o.seed = 1; o.stories = 6000; o.batch = 8; o.steps = 700; o.warmup = 40; o.threads = 0;
    o.lr = 2e-3f; o.wd = 0.1f;
    o.type = INFER_TYPE_F16;
    return o;
}

/* learning rate at step s: linear warmup, then a cosine down to a tenth */
static float train_lr(const train_opts *o, int s) {
    if (s < o->warmup) return o->lr * (float)(s + 1) / (float)o->warmup;
    const double p = (double)(s - o->warmup) / (double)(o->steps > o->warmup ? o->steps - o->warmup : 1);
    return (float)(o->lr * (0.1 + 0.9 * 0.5 * (1.0 + cos(3.141592653589793 * p))));
}

/* AdamW (beta 0.9 / 0.95, eps 1e-8); weight decay on the matrices, not the norms */
static void train_adamw(train_model *m, const float *g, float *mo, float *ve, int step, float lr, float wd) {
    const float b1 = 0.9f, b2 = 0.95f;
    const float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    for (int i = 0; i < m->n_tensors; i++) {
        const train_tensor *t = &m->t[i];
        const float decay = t->rows > 1 ? wd : 0.0f;
        for (size_t k = t->off; k < t->off + (size_t)t->rows * t->cols; k++) {
            mo[k] = b1 * mo[k] + (1 - b1) * g[k];
            ve[k] = b2 * ve[k] + (1 - b2) * g[k] * g[k];
            m->w[k] -= lr * ((mo[k] / c1) / (sqrtf(ve[k] / c2) + 1e-8f) + decay * m->w[k]);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * >>export -- the model and its vocabulary as a llama GGUF.
 * ---------------------------------------------------------------------------------------- */
static infer_status train_export(const train_model *m, const train_vocab *v, const char *path, infer_type type, infer_error *err) {
    const train_config *c = &m->c;
    infer_tensor *ts = (infer_tensor *)calloc((size_t)m->n_tensors, sizeof *ts);
    void **data = (void **)calloc((size_t)m->n_tensors, sizeof *data);
    size_t tok_bytes = 0;
    for (int i = 0; i < v->n; i++) tok_bytes += 8 + strlen(v->piece[i]);
    uint8_t *toks = (uint8_t *)malloc(tok_bytes + 1);
    infer_status st = INFER_ERR_NOMEM;
    if (!ts || !data || !toks) { snprintf(err->msg, sizeof err->msg, "out of memory"); err->status = st; goto done; }
    for (int i = 0; i < m->n_tensors; i++) {
        const train_tensor *t = &m->t[i];
        const infer_type ty = t->rows > 1 ? type : INFER_TYPE_F32;
        const size_t n = (size_t)t->rows * t->cols, bytes = ty == INFER_TYPE_F16 ? 2 * n : 4 * n;
        if (!(data[i] = malloc(bytes))) { snprintf(err->msg, sizeof err->msg, "out of memory"); err->status = st; goto done; }
        if (ty == INFER_TYPE_F32) memcpy(data[i], m->w + t->off, bytes);
        else if ((st = infer_quantize(ty, m->w + t->off, data[i], (int64_t)n, err)) != INFER_OK) goto done;
        ts[i].name = t->name;
        ts[i].type = ty;
        ts[i].n_dims = t->rows > 1 ? 2 : 1;
        ts[i].ne[0] = t->cols;
        ts[i].ne[1] = t->rows;
        ts[i].ne[2] = ts[i].ne[3] = 1;
        ts[i].data = data[i];
        ts[i].nbytes = bytes;
        ts[i].scale = 1.0f;
    }
    size_t at = 0;
    for (int i = 0; i < v->n; i++) {
        const uint64_t len = strlen(v->piece[i]);
        memcpy(toks + at, &len, 8);
        memcpy(toks + at + 8, v->piece[i], len);
        at += 8 + len;
    }
    infer_gguf_kv kv[24];
    int nkv = 0;
    kv[nkv++] = infer_gguf_kv_str("general.architecture", "llama");
    kv[nkv++] = infer_gguf_kv_str("general.name", "tales");
    kv[nkv++] = infer_gguf_kv_u32("llama.context_length", (uint32_t)c->ctx);
    kv[nkv++] = infer_gguf_kv_u32("llama.embedding_length", (uint32_t)c->dim);
    kv[nkv++] = infer_gguf_kv_u32("llama.feed_forward_length", (uint32_t)c->ffn);
    kv[nkv++] = infer_gguf_kv_u32("llama.block_count", (uint32_t)c->n_layers);
    kv[nkv++] = infer_gguf_kv_u32("llama.attention.head_count", (uint32_t)c->n_heads);
    kv[nkv++] = infer_gguf_kv_u32("llama.attention.head_count_kv", (uint32_t)c->n_heads);
    kv[nkv++] = infer_gguf_kv_u32("llama.rope.dimension_count", (uint32_t)(c->dim / c->n_heads));
    kv[nkv++] = infer_gguf_kv_f32("llama.rope.freq_base", c->rope_base);
    kv[nkv++] = infer_gguf_kv_f32("llama.attention.layer_norm_rms_epsilon", c->norm_eps);
    kv[nkv++] = infer_gguf_kv_u32("llama.vocab_size", (uint32_t)v->n);
    kv[nkv++] = infer_gguf_kv_str("tokenizer.ggml.model", "llama");
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.tokens", INFER_GGUF_STRING, (uint64_t)v->n, toks);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.scores", INFER_GGUF_F32, (uint64_t)v->n, v->score);
    kv[nkv++] = infer_gguf_kv_array("tokenizer.ggml.token_type", INFER_GGUF_I32, (uint64_t)v->n, v->type);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.unknown_token_id", TRAIN_TOK_UNK);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.bos_token_id", TRAIN_TOK_BOS);
    kv[nkv++] = infer_gguf_kv_u32("tokenizer.ggml.eos_token_id", TRAIN_TOK_EOS);
    kv[nkv++] = infer_gguf_kv_bool("tokenizer.ggml.add_bos_token", 1);
    kv[nkv++] = infer_gguf_kv_bool("tokenizer.ggml.add_eos_token", 0);
    st = infer_gguf_write(path, kv, nkv, ts, m->n_tensors, 32, err);
done:
    if (data)
        for (int i = 0; i < m->n_tensors; i++) free(data[i]);
    free(data); free(ts); free(toks);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * The whole run: corpus, vocabulary, token stream, training, file.
 * ---------------------------------------------------------------------------------------- */
static int train_n_cores(void) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* the mean loss of forward passes over the given starts (no gradient) */
static double train_eval(const train_model *m, float *wt, train_acts *acts, int n_threads, const int32_t *tokens, const int64_t *starts, int n, int T) {
    double *losses = (double *)calloc((size_t)n, sizeof(double));
    int64_t *counts = (int64_t *)calloc((size_t)n, sizeof(int64_t));
    double sum = 0;
    int64_t cnt = 0;
    if (!losses || !counts) { free(losses); free(counts); return NAN; }
    train_job j;
    memset(&j, 0, sizeof j);
    train_transpose_all(m, wt);
    j.m = m; j.wt = wt; j.tokens = tokens; j.starts = starts; j.B = n; j.T = T; j.losses = losses; j.counts = counts; j.acts = acts;
    train_run_job(&j, n_threads);
    for (int i = 0; i < n; i++) sum += losses[i], cnt += counts[i];
    free(losses); free(counts);
    return sum / (double)(cnt ? cnt : 1);
}

/* The whole run; returns 0, or 1 after a message on stderr. */
static int train_tales(const train_opts *o, const char *out_path, train_result *res) {
    const double t0 = infer_time_seconds();
    const int T = o->c.ctx, B = o->batch, nth = o->threads > 0 ? o->threads : train_n_cores();
    if (T > 1024 || B < 1 || o->steps < 1) { fprintf(stderr, "train: --ctx must be at most 1024, --batch and --steps at least 1\n"); return 1; }
    train_buf text = { 0 };
    if (train_corpus(&text, o->seed, o->stories) < 0) { fprintf(stderr, "train: out of memory for the corpus\n"); return 1; }
    if (o->corpus_path) {
        FILE *f = fopen(o->corpus_path, "wb");
        if (!f || fwrite(text.p, 1, text.n, f) != text.n || fclose(f) != 0) { fprintf(stderr, "train: cannot write %s\n", o->corpus_path); return 1; }
    }
    memset(res, 0, sizeof *res);
    if (!o->quiet) fprintf(stderr, "corpus: %d stories, %zu bytes (seed %llu)\n", o->stories, text.n, (unsigned long long)o->seed);
    train_vocab v;
    if (train_vocab_learn(&v, text.p, text.n, o->c.vocab) < 0) { fprintf(stderr, "train: learning the vocabulary failed\n"); return 1; }
    /* the token stream: <s> story </s> per story; starts[i] = where story i's <s> is */
    int32_t *tokens = NULL;
    int64_t n_tok = 0, cap_tok = 0, *starts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(o->stories + 1));
    int n_st = 0;
    for (size_t at = 0; at < text.n && starts;) {
        const char *nl = (const char *)memchr(text.p + at, '\n', text.n - at);
        const size_t ll = nl ? (size_t)(nl - text.p - at) : text.n - at;
        const int need = train_encode(&v, text.p + at, ll, NULL, 0);
        if (need < 0) break;
        if (n_tok + need + 2 > cap_tok) {
            cap_tok = (n_tok + need + 2) * 2;
            int32_t *nt = (int32_t *)realloc(tokens, sizeof(int32_t) * (size_t)cap_tok);
            if (!nt) break;
            tokens = nt;
        }
        starts[n_st++] = n_tok;
        tokens[n_tok++] = TRAIN_TOK_BOS;
        n_tok += train_encode(&v, text.p + at, ll, tokens + n_tok, need);
        tokens[n_tok++] = TRAIN_TOK_EOS;
        at += ll + 1;
    }
    if (!starts || !tokens || n_st != o->stories) { fprintf(stderr, "train: out of memory for the tokens\n"); return 1; }
    const int n_val = o->stories / 20 > 0 ? o->stories / 20 : 1, n_train = o->stories - n_val;
    /* windows of T+1 tokens starting at a story's <s>: the last ones must still fit the stream */
    int last_ok = n_st - 1;
    while (last_ok > 0 && starts[last_ok] + T + 1 > n_tok) last_ok--;
    if (last_ok < n_train) { fprintf(stderr, "train: the corpus is too small for --ctx %d (%lld tokens)\n", T, (long long)n_tok); return 1; }
    if (!o->quiet) fprintf(stderr, "vocab: %d pieces; %lld tokens (%.2f bytes a token), %d training stories, %d validation stories\n", v.n,
            (long long)n_tok, (double)text.n / (double)n_tok, n_train, n_val);
    train_config c = o->c;
    c.vocab = v.n;
    train_model m;
    if (train_model_create(&m, &c) < 0) { fprintf(stderr, "train: bad model shape\n"); return 1; }
    train_model_init(&m, o->seed, 0.02f);
    if (!o->quiet) fprintf(stderr, "model: dim %d, %d layers, %d heads, ffn %d, ctx %d, vocab %d: %zu parameters\n", c.dim, c.n_layers, c.n_heads,
            c.ffn, c.ctx, c.vocab, m.n_params);
    const size_t P = m.n_params;
    float *grads = (float *)malloc(sizeof(float) * P * (size_t)B), *g = (float *)malloc(sizeof(float) * P);
    float *wt = (float *)malloc(sizeof(float) * P), *mo = (float *)calloc(P, sizeof(float)), *ve = (float *)calloc(P, sizeof(float));
    double *losses = (double *)malloc(sizeof(double) * (size_t)B);
    int64_t *counts = (int64_t *)malloc(sizeof(int64_t) * (size_t)B), *bst = (int64_t *)malloc(sizeof(int64_t) * (size_t)B);
    train_acts *acts = (train_acts *)calloc((size_t)nth, sizeof *acts);
    if (!grads || !g || !wt || !mo || !ve || !losses || !counts || !bst || !acts) { fprintf(stderr, "train: out of memory\n"); return 1; }
    for (int i = 0; i < nth; i++)
        if (train_acts_init(&acts[i], &c, T) < 0) { fprintf(stderr, "train: out of memory\n"); return 1; }
    /* the validation windows: up to 64 held-out stories */
    const int n_vw = n_val < 64 ? n_val : 64;
    int64_t *vst = (int64_t *)malloc(sizeof(int64_t) * (size_t)n_vw);
    int nv = 0;
    for (int i = 0; i < n_vw && vst; i++)
        if (n_train + i <= last_ok) vst[nv++] = starts[n_train + i];
    train_rng r = { o->seed * 0x9E3779B97F4A7C15ull + 7 };
    double train_loss = NAN, val_loss = NAN;
    for (int step = 0; step < o->steps; step++) {
        const double ts = infer_time_seconds();
        for (int b = 0; b < B; b++) bst[b] = starts[train_rng_below(&r, (uint32_t)n_train)];
        train_transpose_all(&m, wt);
        train_job j;
        memset(&j, 0, sizeof j);
        j.m = &m; j.wt = wt; j.tokens = tokens; j.starts = bst; j.B = B; j.T = T; j.scale = 1.0f / ((float)B * T);
        j.grads = grads; j.losses = losses; j.counts = counts; j.acts = acts;
        train_run_job(&j, nth);
        /* the batch's gradient: per-sequence buffers summed in sequence order */
        memcpy(g, grads, sizeof(float) * P);
        for (int b = 1; b < B; b++) {
            const float *gb = grads + (size_t)b * P;
            for (size_t i = 0; i < P; i++) g[i] += gb[i];
        }
        double norm = 0, loss = 0;
        for (size_t i = 0; i < P; i++) norm += (double)g[i] * g[i];
        norm = sqrt(norm);
        if (norm > 1.0) for (size_t i = 0; i < P; i++) g[i] *= (float)(1.0 / norm);   /* clip the global norm at 1 */
        for (int b = 0; b < B; b++) loss += losses[b];
        loss /= (double)B * T;
        train_loss = step == 0 ? loss : 0.95 * train_loss + 0.05 * loss;
        if (step == 0) res->first_loss = loss;
        const float lr = train_lr(o, step);
        train_adamw(&m, g, mo, ve, step + 1, lr, o->wd);
        const double dt = infer_time_seconds() - ts;
        if (!o->quiet && (step % 20 == 0 || step == o->steps - 1))
            fprintf(stderr, "step %4d/%d  loss %.4f (avg %.4f)  lr %.2e  |g| %.3f  %.0f tok/s  %.0f s\n", step + 1, o->steps, loss,
                    train_loss, lr, norm, (double)B * T / dt, infer_time_seconds() - t0);
        if ((step + 1) % 200 == 0 || step == o->steps - 1) {
            val_loss = train_eval(&m, wt, acts, nth, tokens, vst, nv, T);
            if (!o->quiet) fprintf(stderr, "validation loss %.4f (%d held-out stories)\n", val_loss, nv);
        }
    }
    /* the training loss of the final weights, on fixed windows (the first 64 training stories) */
    const double final_train = train_eval(&m, wt, acts, nth, tokens, starts, 64 < n_train ? 64 : n_train, T);
    infer_error err;
    if (train_export(&m, &v, out_path, o->type, &err) != INFER_OK) { fprintf(stderr, "train: %s: %s\n", out_path, err.msg); return 1; }
    res->train_loss = final_train;
    res->val_loss = val_loss;
    res->seconds = infer_time_seconds() - t0;
    res->n_tokens = n_tok;
    res->n_vocab = v.n;
    res->n_params = m.n_params;
    if (!o->quiet)
        fprintf(stderr, "done: train loss %.4f, validation loss %.4f, %.0f s, %d threads; wrote %s\n", final_train, val_loss,
                res->seconds, nth, out_path);
    for (int i = 0; i < nth; i++) train_acts_free(&acts[i]);
    free(acts); free(grads); free(g); free(wt); free(mo); free(ve); free(losses); free(counts); free(bst); free(vst);
    free(tokens); free(starts); free(text.p);
    train_model_free(&m);
    train_vocab_free(&v);
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * The gradient check (also run by tests.c): for every tensor of a tiny model, the backward
 * pass's directional derivative along two directions (the gradient itself, and a random
 * one) against a central finite difference of the loss.
 * ---------------------------------------------------------------------------------------- */
typedef struct train_gradcheck { double fd[2], an[2]; } train_gradcheck;

/* a tiny model with weights large enough to make every path matter, and a token sequence */
static train_config train_tiny_config(void) {
    train_config c;
    c.dim = 16; c.n_layers = 2; c.n_heads = 2; c.ffn = 24; c.ctx = 12; c.vocab = 29;
    c.rope_base = 10000.0f; c.norm_eps = 1e-5f;
    return c;
}

/* res[i]: tensor i's two checks. Returns -1 without memory. */
static int train_grad_check(const train_config *c, uint64_t seed, train_gradcheck *res) {
    train_model m;
    train_acts a;
    if (train_model_create(&m, c) < 0) return -1;
    if (train_acts_init(&a, c, c->ctx) < 0) { train_model_free(&m); return -1; }
    train_model_init(&m, seed, 0.3f);
    train_rng r = { seed + 99 };
    for (int i = 0; i < m.n_tensors; i++) /* norm gains away from 1 */
        if (m.t[i].rows == 1)
            for (int k = 0; k < m.t[i].cols; k++) m.w[m.t[i].off + k] = 0.5f + (float)train_rng_unit(&r);
    const int T = c->ctx - 1;
    int32_t ids[1024], tg[1024];
    for (int t = 0; t <= T; t++) ids[t] = (int32_t)train_rng_below(&r, (uint32_t)c->vocab);
    for (int t = 0; t < T; t++) tg[t] = ids[t + 1];
    float *g = (float *)calloc(m.n_params, sizeof(float)), *wt = (float *)malloc(sizeof(float) * m.n_params);
    float *dir = (float *)malloc(sizeof(float) * m.n_params);
    if (!g || !wt || !dir) { free(g); free(wt); free(dir); train_acts_free(&a); train_model_free(&m); return -1; }
    train_transpose_all(&m, wt);
    train_forward(&m, wt, &a, ids, tg, T);
    train_backward(&m, &a, ids, tg, T, 1.0f, g);
    for (int i = 0; i < m.n_tensors; i++) {
        const train_tensor *t = &m.t[i];
        const size_t n = (size_t)t->rows * t->cols;
        for (int d = 0; d < 2; d++) {
            /* a unit direction over this tensor: the gradient, or random */
            double nn = 0, an = 0;
            for (size_t k = 0; k < n; k++) {
                dir[k] = d == 0 ? g[t->off + k] : train_rng_normal(&r);
                nn += (double)dir[k] * dir[k];
            }
            nn = sqrt(nn) + 1e-30;
            for (size_t k = 0; k < n; k++) { dir[k] = (float)(dir[k] / nn); an += (double)dir[k] * g[t->off + k]; }
            const float eps = 1e-2f;
            double lp, lm;
            for (size_t k = 0; k < n; k++) m.w[t->off + k] += eps * dir[k];
            train_transpose_all(&m, wt);
            lp = train_forward(&m, wt, &a, ids, tg, T);
            for (size_t k = 0; k < n; k++) m.w[t->off + k] -= 2 * eps * dir[k];
            train_transpose_all(&m, wt);
            lm = train_forward(&m, wt, &a, ids, tg, T);
            for (size_t k = 0; k < n; k++) m.w[t->off + k] += eps * dir[k];
            res[i].fd[d] = (lp - lm) / (2.0 * eps);
            res[i].an[d] = an;
        }
    }
    free(g); free(wt); free(dir);
    train_acts_free(&a);
    train_model_free(&m);
    return 0;
}

/* the relative error of a check: |fd - an| / max(|fd|, |an|, 1e-3) */
static double train_grad_err(double fd, double an) {
    const double s = fmax(fmax(fabs(fd), fabs(an)), 1e-3);
    return fabs(fd - an) / s;
}

#ifndef TRAIN_NO_MAIN
static void train_usage(FILE *f, int code) {
    fputs("usage:\n"
          "  train tales OUT.gguf [--seed S] [--stories N] [--vocab N] [--dim N] [--layers N] [--heads N] [--ff N]\n"
          "                       [--ctx N] [--batch N] [--steps N] [--lr X] [--warmup N] [--wd X] [--threads N]\n"
          "                       [--type f16|f32] [--corpus FILE]\n"
          "  train corpus OUT.txt [--seed S] [--stories N]\n"
          "  train check\n", f);
    exit(code);
}

static long train_arg_int(const char *opt, const char *s, long lo, long hi) {
    char *end;
    const long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) { fprintf(stderr, "train: bad value '%s' for %s (%ld..%ld)\n", s, opt, lo, hi); exit(1); }
    return v;
}
static float train_arg_float(const char *opt, const char *s) {
    char *end;
    const float v = strtof(s, &end);
    if (!*s || *end || !(v >= 0) || !isfinite(v)) { fprintf(stderr, "train: bad value '%s' for %s\n", s, opt); exit(1); }
    return v;
}

int main(int argc, char **argv) {
    if (argc < 2) train_usage(stderr, 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) train_usage(stdout, 0);
    if (!strcmp(argv[1], "check")) {
        const train_config c = train_tiny_config();
        train_gradcheck res[64];
        if (train_grad_check(&c, 1, res) < 0) { fprintf(stderr, "train: out of memory\n"); return 1; }
        double worst = 0;
        train_model m;
        train_model_create(&m, &c);
        for (int i = 0; i < m.n_tensors; i++) {
            const double e0 = train_grad_err(res[i].fd[0], res[i].an[0]), e1 = train_grad_err(res[i].fd[1], res[i].an[1]);
            printf("%-26s along gradient fd %+.6e an %+.6e (rel %.1e)   random fd %+.6e an %+.6e (rel %.1e)\n", m.t[i].name,
                   res[i].fd[0], res[i].an[0], e0, res[i].fd[1], res[i].an[1], e1);
            worst = fmax(worst, fmax(e0, e1));
        }
        printf("worst relative error %.2e\n", worst);
        train_model_free(&m);
        return worst < 1e-2 ? 0 : 1;
    }
    if (argc < 3) train_usage(stderr, 1);
    train_opts o = train_default_opts();
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) { fprintf(stderr, "train: %s needs a value\n", a); return 1; }
        i++;
        if (!strcmp(a, "--seed")) o.seed = (uint64_t)train_arg_int(a, val, 0, 1L << 30);
        else if (!strcmp(a, "--stories")) o.stories = (int)train_arg_int(a, val, 1, 10000000);
        else if (!strcmp(a, "--vocab")) o.c.vocab = (int)train_arg_int(a, val, 300, 65536);
        else if (!strcmp(a, "--dim")) o.c.dim = (int)train_arg_int(a, val, 2, 4096);
        else if (!strcmp(a, "--layers")) o.c.n_layers = (int)train_arg_int(a, val, 1, 64);
        else if (!strcmp(a, "--heads")) o.c.n_heads = (int)train_arg_int(a, val, 1, 64);
        else if (!strcmp(a, "--ff")) o.c.ffn = (int)train_arg_int(a, val, 1, 16384);
        else if (!strcmp(a, "--ctx")) o.c.ctx = (int)train_arg_int(a, val, 2, 1024);
        else if (!strcmp(a, "--batch")) o.batch = (int)train_arg_int(a, val, 1, 4096);
        else if (!strcmp(a, "--steps")) o.steps = (int)train_arg_int(a, val, 1, 10000000);
        else if (!strcmp(a, "--warmup")) o.warmup = (int)train_arg_int(a, val, 1, 10000000);
        else if (!strcmp(a, "--threads")) o.threads = (int)train_arg_int(a, val, 1, 64);
        else if (!strcmp(a, "--lr")) o.lr = train_arg_float(a, val);
        else if (!strcmp(a, "--wd")) o.wd = train_arg_float(a, val);
        else if (!strcmp(a, "--corpus")) o.corpus_path = val;
        else if (!strcmp(a, "--type")) {
            if (!strcmp(val, "f16")) o.type = INFER_TYPE_F16;
            else if (!strcmp(val, "f32")) o.type = INFER_TYPE_F32;
            else { fprintf(stderr, "train: --type is f16 or f32\n"); return 1; }
        } else { fprintf(stderr, "train: unknown option %s\n", a); return 1; }
    }
    if (!strcmp(argv[1], "corpus")) {
        train_buf text = { 0 };
        if (train_corpus(&text, o.seed, o.stories) < 0) { fprintf(stderr, "train: out of memory\n"); return 1; }
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(text.p, 1, text.n, f) != text.n || fclose(f) != 0) { fprintf(stderr, "train: cannot write %s\n", argv[2]); return 1; }
        /* every word written is a word of the tables (what tests.c's tales_writes relies on) */
        for (size_t i = 0; i < text.n;) {
            if (!train_is_letter((unsigned char)text.p[i])) { i++; continue; }
            size_t j = i;
            while (j < text.n && train_is_letter((unsigned char)text.p[j])) j++;
            if (!train_story_word(text.p + i, j - i)) { fprintf(stderr, "train: '%.*s' is in no table\n", (int)(j - i), text.p + i); return 1; }
            i = j;
        }
        fprintf(stderr, "wrote %s: %d stories, %zu bytes\n", argv[2], o.stories, text.n);
        free(text.p);
        return 0;
    }
    train_result res;
    if (!strcmp(argv[1], "tales")) return train_tales(&o, argv[2], &res);
    train_usage(stderr, 1);
    return 1;
}
#endif
