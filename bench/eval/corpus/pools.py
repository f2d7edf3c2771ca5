"""The word pools the conversations are drawn from (their order is part of the
seed's stream: reorder nothing)."""

PROTAGONISTS = [
    ("Dana", "Whitfield", "she"),
    ("Marcus", "Chen", "he"),
    ("Priya", "Raman", "she"),
    ("Tomas", "Alvarez", "he"),
    ("Leah", "Goldberg", "she"),
    ("Kenji", "Watanabe", "he"),
    ("Sofia", "Rossi", "she"),
    ("Olumide", "Adeyemi", "he"),
    ("Hannah", "Novak", "she"),
    ("Diego", "Morales", "he"),
    ("Grace", "Liu", "she"),
    ("Felix", "Brennan", "he"),
]
SIBLINGS = [("Maya", "she"), ("Ethan", "he"), ("Nora", "she"), ("Jonah", "he"), ("Clara", "she"),
            ("Omar", "he"), ("Ines", "she"), ("Theo", "he"), ("Ruth", "she"), ("Caleb", "he"),
            ("Vera", "she"), ("Isaac", "he")]
# Friends who go by a nickname that is not a part of their name.
FRIENDS = [("Robert Smith", "Bob", "he"), ("Elizabeth Moore", "Liz", "she"),
           ("William Hart", "Billy", "he"), ("Katherine Price", "Kit", "she"),
           ("Richard Doyle", "Rick", "he"), ("Margaret Kelly", "Maggie", "she"),
           ("Jonathan Reyes", "Jack", "he"), ("Patricia Quinn", "Trish", "she"),
           ("Alexander Brandt", "Sandy", "he"), ("Rebecca Stone", "Becky", "she"),
           ("Edward Walsh", "Ned", "he"), ("Susannah Cole", "Sukie", "she")]
PARTNERS = [("Sam", "Ortiz", "he"), ("Jordan", "Blake", "she"), ("Riley", "Park", "he"),
            ("Casey", "Morgan", "she"), ("Jamie", "Flores", "he"), ("Morgan", "Ellis", "she"),
            ("Taylor", "Brooks", "he"), ("Avery", "Kim", "she"), ("Quinn", "Harper", "he"),
            ("Drew", "Castillo", "she"), ("Rowan", "Hayes", "he"), ("Elliot", "Vance", "she")]
COWORKERS = ["Anika", "Lars", "Mateo", "Yusuf", "Bea", "Idris", "Wen", "Carmen", "Ravi", "Tova",
             "Hugo", "Lena"]
CITIES = ["Portland", "Denver", "Austin", "Boston", "Seattle", "Chicago", "Minneapolis",
          "Atlanta", "San Diego", "Pittsburgh", "Nashville", "Raleigh", "Phoenix", "Baltimore",
          "Sacramento", "Madison", "Tucson", "Richmond", "Columbus", "Salt Lake City",
          "Albuquerque", "Milwaukee", "Cincinnati", "Providence"]
TRIP_CITIES = ["Lisbon", "Toronto", "Dublin", "Berlin", "Montreal", "Copenhagen", "Kyoto",
               "Mexico City", "Edinburgh", "Vienna", "Oslo", "Prague"]
# (full name, the short name people use for it)
COMPANIES = [("Acme Corporation", "Acme"), ("Globex Industries", "Globex"),
             ("Northwind Traders", "Northwind"), ("Vandelay Industries", "Vandelay"),
             ("Initech Software", "Initech"), ("Umbrella Health", "Umbrella"),
             ("Cyberdyne Systems", "Cyberdyne"), ("Tyrell Robotics", "Tyrell"),
             ("Soylent Foods", "Soylent"), ("Wonka Confections", "Wonka"),
             ("Massive Dynamic", "Massive Dynamic"), ("Oceanic Airlines", "Oceanic"),
             ("Stark Logistics", "Stark"), ("Hooli Labs", "Hooli"), ("Monarch Bank", "Monarch"),
             ("Bluth Construction", "Bluth"), ("Pendant Publishing", "Pendant"),
             ("Dunder Paper", "Dunder"), ("Gekko Capital", "Gekko"), ("Nakatomi Trading", "Nakatomi"),
             ("Prestige Worldwide", "Prestige"), ("Sterling Cooper", "Sterling Cooper"),
             ("Wayne Biotech", "Wayne Biotech"), ("Rekall Travel", "Rekall")]
SCHOOLS = ["Lincoln High School", "Riverside Elementary", "Oakwood Middle School",
           "Jefferson Community College", "Maple Grove Academy", "Westfield High School",
           "Hillcrest Elementary", "Brookside Montessori", "Cedar Valley College",
           "Eastlake High School", "Harbor View Elementary", "Summit Charter School"]
JOBS = ["nurse", "software engineer", "accountant", "graphic designer", "data analyst",
        "pharmacist", "architect", "product manager", "paralegal", "physical therapist",
        "marketing manager", "electrician", "veterinarian", "civil engineer", "librarian",
        "financial analyst"]
OLD_JOBS = [("a barista", "Blue Bottle Cafe"), ("a lifeguard", "the Westside Aquatic Center"),
            ("a bookstore clerk", "Powell's Books"), ("a line cook", "Luigi's Trattoria"),
            ("a camp counselor", "Camp Tall Pines"), ("a bike courier", "Zoom Couriers"),
            ("a tutor", "Kumon"), ("a cashier", "Trader Joe's")]
PETS = [("dog", "golden retriever"), ("dog", "beagle"), ("dog", "border collie"),
        ("dog", "corgi"), ("cat", "tabby"), ("cat", "Maine Coon"), ("dog", "labrador"),
        ("cat", "Siamese"), ("rabbit", "lop-eared"), ("dog", "greyhound"), ("cat", "ginger"),
        ("dog", "dachshund")]
PET_NAMES = ["Biscuit", "Pepper", "Miso", "Juniper", "Waffles", "Luna", "Rocket", "Mochi",
             "Pickles", "Ziggy", "Olive", "Bruno", "Nacho", "Clementine", "Hazel", "Bandit",
             "Sprout", "Tofu", "Maple", "Gizmo", "Noodle", "Pixel", "Scout", "Fig", "Turnip",
             "Dumpling", "Pretzel", "Cosmo", "Marble", "Basil", "Ginger Snap", "Toast"]
HOBBIES = ["rock climbing", "pottery", "trail running", "chess", "salsa dancing", "birdwatching",
           "woodworking", "sourdough baking", "watercolor painting", "road cycling", "knitting",
           "film photography", "vegetable gardening", "kayaking", "jazz piano", "bouldering",
           "open water swimming", "calligraphy", "beekeeping", "fencing"]
BOOKS = [("The Overstory", "Richard Powers"), ("Piranesi", "Susanna Clarke"),
         ("Educated", "Tara Westover"), ("Project Hail Mary", "Andy Weir"),
         ("Circe", "Madeline Miller"), ("The Remains of the Day", "Kazuo Ishiguro"),
         ("Station Eleven", "Emily St. John Mandel"), ("Braiding Sweetgrass", "Robin Wall Kimmerer"),
         ("The Name of the Wind", "Patrick Rothfuss"), ("Middlemarch", "George Eliot"),
         ("The Left Hand of Darkness", "Ursula K. Le Guin"), ("Pachinko", "Min Jin Lee")]
FILLERS = [
    "Can you suggest something quick for dinner tonight? I have chickpeas, spinach and rice.",
    "What's a good way to stay focused when working from home?",
    "Thanks, that's really helpful!",
    "Any tips for falling asleep faster? I've been staring at the ceiling until 1am.",
    "Can you explain the difference between a Roth IRA and a traditional IRA?",
    "I need a gift idea for a coworker's farewell, something under thirty dollars.",
    "How long should I boil an egg if I want the yolk a little runny?",
    "Write me a short, polite email declining a meeting invite.",
    "What's the best way to get wine stains out of a cotton shirt?",
    "Ok, that makes sense. Let's pick this up tomorrow.",
    "Can you recommend a podcast for a long drive? Something about history maybe.",
    "How many cups are in a liter? I'm converting a recipe.",
    "Give me a 20 minute bodyweight workout I can do in a small apartment.",
    "What should I pack for a weekend camping trip in early spring?",
    "Haha, fair enough.",
    "Can you help me plan a budget for the month? Rent is the big one.",
    "What are some good questions to ask at the end of a job interview?",
    "Is it normal for a sourdough starter to smell like nail polish?",
    "Summarize the plot of Hamlet in three sentences, I forgot how it ends.",
    "How do I politely tell a neighbor their music is too loud?",
    "Good morning! Rough night, the storm kept me up.",
    "What's a good stretch for a stiff lower back?",
    "Remind me, what's the rule of thumb for tipping at a restaurant?",
    "I'm bored. Tell me a fun fact about octopuses.",
]

NOISE_TEMPLATES = [
    "Can you help me think through {t}?",
    "Quick question about {t}: where do I even start?",
    "I keep putting off {t}. Any motivation tips?",
    "What would you do about {t} if you were me?",
    "Give me a short checklist for {t}.",
    "Make a three-step plan for {t}, nothing fancy.",
    "Is it silly to spend a whole weekend on {t}?",
    "What's the most common mistake people make with {t}?",
    "Explain {t} to me like I'm twelve.",
    "I read an article about {t} today, it was surprisingly interesting.",
    "Can you write a haiku about {t}?",
    "How much time should I budget for {t}?",
    "Pros and cons of doing {t} this month?",
    "Any good beginner resources on {t}?",
    "Ok, back to {t}. What did we decide?",
    "Be honest: is {t} worth the effort?",
]
NOISE_TOPICS = [
    "tax forms", "a birthday party", "spring cleaning", "a road trip playlist", "meal prep",
    "a wedding toast", "learning Spanish", "a home office setup", "a retirement account",
    "fixing a leaky faucet", "a chess opening", "a history podcast", "composting",
    "a standing desk", "a car rental", "a houseplant that keeps dying", "a cover letter",
    "a board game night", "a budget spreadsheet", "winter tires", "a marathon training plan",
    "a phone upgrade", "a dentist appointment", "a photo album", "a noisy fridge",
    "a vegetarian lasagna", "a news summary", "a password manager", "a jigsaw puzzle",
    "a thank-you card",
]
