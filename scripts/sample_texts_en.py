"""English sample documents (original texts written for this project; the studies are fictional)."""

from __future__ import annotations

from sample_docs import Abstract, Doc, body, refs, text

GRAPHS = Doc(
    id="en_twocol_graphs",
    language="en",
    kind="article",
    title="Sparse Neighbourhood Sampling for Traffic Forecasting on Large Road Graphs",
    authors="Mara Lindqvist, Tomas Okafor and Helen Yu",
    affiliation="Department of Computing, Northbridge Institute of Technology",
    venue="Proceedings of the Workshop on Spatial Learning, 2019, pp. 41-48",
    date="2019-06-14",
    columns=2,
    abstract_in_columns=True,
    font_size=11,
    leading=1.5,
    front_matter=(
        "Article history: received 3 February 2019; accepted 2 May 2019.",
        "Correspondence: m.lindqvist@northbridge.example.org",
        "Code and data: see the supplementary material.",
        "This paper is an extended version of a poster presented at the same workshop "
        "in 2018; Sections 3 and 4 are new.",
    ),
    notes="Two-column layout; article history and a note open the left column, and the "
    "abstract continues from the bottom of the left column to the top of the right one "
    "(abstract across a column break).",
    abstracts=(
        Abstract("en", "Abstract", text("""
            Forecasting traffic speed on a road network is usually framed as learning on a
            graph whose nodes are loop sensors and whose edges follow the roads. Graph
            convolutional models give good forecasts, but their cost grows with the size of
            the neighbourhood that each node aggregates, and city-scale networks with tens of
            thousands of sensors quickly exceed the memory of a single accelerator. We study
            a simple alternative in which every node draws a fixed number of neighbours at
            each layer, with a probability that decreases with travel time rather than with
            hop count. The sampler needs no preprocessing beyond shortest travel times, and
            it can be combined with any message passing layer. Its only parameter is a
            temperature, which we set from the median travel time of a road segment.

            On two public benchmarks and on a new network of 21,400 sensors, sparse sampling
            with eight neighbours per layer keeps the mean absolute error within 2 percent of
            full aggregation at the 15 minute horizon and within 4 percent at 60 minutes,
            while training uses five times less memory. Travel-time weighting matters most
            on motorway junctions, where hop distance is a poor proxy for influence. The
            error grows smoothly as the number of sampled neighbours falls, so the budget can
            be chosen from the memory available. We release the sampler and the evaluation
            scripts.
            """), keywords="Keywords: traffic forecasting; graph neural networks; sampling"),
    ),
    body=body("""
        # 1 Introduction

        Short-term traffic forecasts feed route guidance, signal control and incident
        detection. Sensors embedded in the road report speed or flow every few minutes, and
        the task is to predict these values up to an hour ahead. Because congestion
        propagates along roads, recent methods treat the network as a graph and let each
        sensor combine the recent history of its neighbours.

        The price of this design is memory. A two-layer model that aggregates every
        neighbour within three hops touches hundreds of nodes per prediction in a dense
        urban grid, and the activations of all of them must be kept for the backward pass.
        Existing remedies partition the graph into clusters, which cuts roads at the
        borders, or prune edges once before training, which freezes a single view of the
        network.

        We revisit neighbour sampling, which is well known for citation and social graphs,
        and ask what changes on roads. Two things do. Road graphs have a small and nearly
        constant degree, so the number of neighbours is not the problem; the depth of the
        receptive field is. And the relevant notion of distance is travel time, which
        varies by an order of magnitude between a motorway link and a residential street.

        # 2 Related work

        Graph models for traffic combine a spatial operator, such as a diffusion or spectral
        convolution over the sensor graph, with a temporal one, such as a recurrent cell or
        a dilated convolution over the last hour. Most of them were designed and tested on
        networks of a few hundred sensors, where the full adjacency matrix fits easily in
        memory and every layer can aggregate all neighbours.

        Scaling graph learning has been studied mostly on citation, product and social
        graphs. Node-wise sampling draws a fixed number of neighbours per node and layer;
        layer-wise sampling draws one set of nodes per layer for the whole batch; subgraph
        methods train on clusters or random walks. These graphs have heavy-tailed degree
        distributions, and the samplers are designed to bound the cost of hubs. Road graphs
        have no hubs, which changes what a good sampler must do.

        !fig Figure 1. Distribution of free-flow travel times between neighbouring sensors.

        # 3 Method

        Let G be the directed road graph and t(u, v) the free-flow travel time of the
        shortest path from u to v. For a target node v and a layer l, we draw k nodes
        without replacement from the set of nodes within a travel-time budget, with
        probability proportional to exp(-t(u, v) / tau). The temperature tau is the only
        new hyperparameter and is set to the median travel time of an edge.

        !fig Figure 2. Mean absolute error against memory use for four samplers.

        The sampled sets are redrawn at every training step, so that across epochs each
        node sees most of its budgeted neighbourhood. At inference time we either draw a
        single sample, which is fast, or average the forecasts of several draws, which
        reduces variance at a proportional cost.

        # 4 Experiments

        We use two public loop-detector benchmarks with 207 and 325 sensors and a new
        network of 21,400 sensors covering a metropolitan region. All models receive the
        last hour of five-minute speeds and predict the next hour. We report mean absolute
        error at three horizons and peak training memory.

        !tab Table 1. Mean absolute error (km/h) at three horizons on the large network. |
        Model | 15 min | 30 min | 60 min :: Full aggregation ; Cluster partition ; Hop
        sampling, k = 8 ; Travel-time sampling, k = 8

        Travel-time sampling matches full aggregation closely at short horizons and loses
        a little at one hour, where information from farther upstream would help. Hop-based
        sampling with the same k is clearly worse on motorways, because a single hop may
        span either 80 metres or 4 kilometres. Cluster partitioning degrades near cluster
        borders, which in our network often coincide with river crossings.

        Averaging several draws at inference time reduces the error by a further few
        percent at the one-hour horizon. Four draws recover most of the gain; beyond that
        the forecasts are nearly identical. Training time per epoch is about 30 percent
        shorter with sampling, because the aggregation step touches fewer nodes, although
        drawing the samples adds a small overhead on the processor.

        !fig Figure 3. Error at the 60 minute horizon as a function of the number of
        sampled neighbours k.

        Finally, we examined where the errors occur. Most of the remaining error is
        concentrated in the first minutes of incidents, which no model based on recent
        history can anticipate, and at sensors with long gaps in their data. Neither is
        specific to sampling.

        # 5 Conclusion

        Sparse neighbourhood sampling is a cheap way to scale traffic forecasting models to
        networks of realistic size. The key is to measure distance as travel time. Future
        work will adapt the budget to the time of day, since congestion changes how far
        influence travels.
        """),
    references=refs("""
        [1] A. Brandt and K. Sato. Diffusion convolution for sensor networks. Journal of
        Transport Computing, 12(3):201-219, 2017.

        [2] L. Moreau. Sampling neighbourhoods in large graphs. In Proceedings of the
        Conference on Scalable Learning, pages 88-97, 2016.

        [3] R. Iyer, P. Novak and D. Cole. Loop detectors and their failures: a field
        guide. Traffic Data Review, 4:1-30, 2015.
        """),
)

TRIAL = Doc(
    id="en_structured_trial",
    language="en",
    kind="article",
    title="Text-Message Reminders and Adherence to Home Blood Pressure Monitoring: "
    "A Pragmatic Cluster Trial in Primary Care",
    authors="Grace Adeyemi, Peter Holm, Lucia Ferraz and Samir Haddad",
    affiliation="Centre for Primary Care Research, Eastvale University",
    venue="Journal of Community Health Practice 2021; 9: 112-119",
    date="2021-03-02",
    font_size=12,
    leading=1.6,
    notes="One-column layout with a structured abstract (Background, Methods, Results, "
    "Conclusions), one section per line in the manifest as printed with run-in titles.",
    abstracts=(
        Abstract("en", "Abstract", text("""
            Background: Home blood pressure monitoring is recommended for adults with
            hypertension, but many patients stop measuring within a few weeks.

            Methods: We randomised 24 general practices to usual care or to weekly text
            messages reminding patients to measure and record their blood pressure. Adults
            aged 40 to 79 years with treated hypertension were eligible. The primary outcome
            was the proportion of patients who recorded at least 12 measurements in each
            month over six months.

            Results: Of 1,148 patients enrolled, 571 were in reminder practices and 577 in
            control practices. Adherence was 58.2% with reminders and 41.7% without (adjusted
            odds ratio 1.94, 95% confidence interval 1.41 to 2.67). Mean systolic pressure at
            six months did not differ between groups.

            Conclusions: Weekly reminders increased the regularity of home monitoring at
            negligible cost, but did not by themselves lower blood pressure.
            """), structured=True, keywords="Keywords: hypertension; self-monitoring; "
            "text messaging; primary care; cluster randomised trial"),
    ),
    body=body("""
        # Introduction

        Measuring blood pressure at home gives more readings than clinic visits and avoids
        the white-coat effect. Guidelines therefore encourage patients with hypertension to
        measure at home and to bring their records to appointments. In practice, the number
        of recorded measurements falls steeply after the first weeks, and clinicians are
        left with sparse and irregular diaries.

        Text messages are cheap, reach almost every patient, and have been used to support
        medication adherence. Whether they also sustain self-measurement is less clear,
        since measuring requires a device, a quiet moment and a written record. We tested a
        minimal reminder in routine primary care.

        # Methods

        The trial was run in 24 practices of one health district. Practices, not patients,
        were randomised, so that reminders could be switched on for a whole practice list
        without contaminating controls seen by the same nurse. Allocation was stratified by
        practice size and concealed until practices had agreed to take part.

        Eligible patients were aged 40 to 79 years, had a diagnosis of hypertension, were
        taking at least one antihypertensive drug and owned a validated upper-arm monitor.
        Patients in reminder practices received one message every Monday morning for six
        months. The message contained no clinical advice.

        !tab Table 1. Characteristics of the patients at inclusion. | Characteristic |
        Reminders | Control | All :: Age, years (mean) ; Women (%) ; Systolic pressure, mmHg
        ; Diastolic pressure, mmHg ; Drugs per patient

        Patients returned their paper diaries at the six-month visit, and a research nurse
        counted the recorded measurements per month. The primary outcome was the proportion
        of patients with at least 12 measurements in every one of the six months. Secondary
        outcomes were the mean systolic and diastolic pressure measured at the clinic at six
        months and the number of unplanned consultations.

        We analysed outcomes with mixed-effects logistic and linear models with a random
        intercept for the practice, adjusted for age, sex and baseline pressure.

        # Results

        Between February and October 2019, 1,148 patients were enrolled. Follow-up diaries
        were returned by 93% of patients in both groups. The proportion of adherent patients
        declined in both groups over time but remained higher with reminders at every month.

        !fig Figure 1. Proportion of patients recording at least 12 measurements, by month.

        At six months, clinic systolic pressure was 138.9 mmHg with reminders and 139.6
        mmHg without, a difference compatible with no effect. Unplanned consultations were
        rare and similar in both groups.

        # Discussion

        A weekly text message is one of the cheapest interventions available to a practice,
        and it made regular home measurement more common. It did not change blood pressure,
        which is not surprising: measuring more often helps only if the readings lead to
        changes in treatment. Reminders may therefore be most useful as part of a programme
        in which nurses review home readings and adjust treatment.

        The trial has limitations. Diaries were self-reported, and some patients may have
        written down readings they did not take. Practices in a single district may not be
        typical of other regions.

        # Appendix

        !tab Table A1. Recorded measurements per patient and month (mean). | Month |
        Reminders | Control | Difference :: Month 1 ; Month 2 ; Month 3 ; Month 4 ; Month 5
        ; Month 6
        """),
    references=refs("""
        1. Moreno J, Clarke A. Home measurement of blood pressure in primary care: a review.
        Fam Pract Rev 2016; 22: 45-58.

        2. Lindgren S, Otieno B, Walsh R. Short message reminders for medication adherence.
        J Health Commun Stud 2018; 7: 301-310.

        3. Hartmann U. Cluster randomised trials in general practice: design notes. Prim
        Care Methods 2015; 3: 11-19.
        """),
)

NOTE = Doc(
    id="en_onecol_timing_note",
    language="en",
    kind="article",
    title="A Note on Reproducible Timing of Command-Line Tools",
    authors="Jonas Weber",
    affiliation="Independent researcher",
    venue="Technical note",
    date=None,
    font_size=12,
    leading=1.7,
    notes="One-column technical note with a very short abstract and no publication date.",
    abstracts=(
        Abstract("en", "Abstract", text("""
            Timings of command-line tools vary from run to run. We list five habits that
            make such measurements repeatable: warm caches, fixed frequencies, many runs, the
            median, and a written record of the machine.
            """)),
    ),
    body=body("""
        # 1. Why timings drift

        A program that reads files runs faster the second time, because the operating
        system keeps recently read pages in memory. Processors change their clock frequency
        with temperature and load. Other processes compete for the same cores. Each of these
        effects alone can move a measurement by ten percent or more, which is as large as
        many of the improvements people try to measure.

        # 2. Five habits

        First, run the command once before measuring, so that every measured run sees the
        same warm cache; or, if cold-cache behaviour matters, drop the cache explicitly
        before each run. Second, fix the processor frequency, or at least record the
        governor in use. Third, repeat the measurement many times; ten runs are a minimum
        for a short command.

        Fourth, report the median and the spread rather than the mean, because a single
        interruption can produce one very slow run. Fifth, write down the machine, the
        operating system, the versions of the tools and the input sizes, so that a reader
        can tell whether a later result is comparable.

        !tab Table 1. Wall-clock time (s) of one tool over ten runs under three conditions.
        | Condition | Median | Minimum | Maximum :: Cold cache ; Warm cache ; Warm cache,
        fixed frequency

        # 3. An example

        We timed a text extraction tool on a folder of documents. With a cold cache the
        median was well above the warm value, and the spread was wide. Fixing the frequency
        reduced the spread further but hardly moved the median.

        !fig Figure 1. Run times of ten consecutive runs under the three conditions.

        # 4. Conclusion

        None of these habits is new, but they are easy to forget. A short record of the
        conditions costs a minute and saves arguments later.

        !newpage

        # Appendix: a record template

        The record we keep next to every timing is short. It names the machine and its
        processor, the amount of memory, the operating system and kernel version, the
        frequency governor, the version of the measured tool and of the shell, the size
        and location of the input, whether the cache was warm or cold, and the number of
        runs. It also states what else was running, if anything. A table like the one
        below is enough.

        !tab Table A1. Example record kept with a timing. | Item | Run A | Run B | Run C ::
        Memory (GB) ; Input size (MB) ; Runs ; Background load (%)
        """),
    references=refs("""
        [1] P. Kowalski. Measuring programs without fooling yourself. Software Practice
        Letters, 5:14-20, 2014.
        """),
)

SENSORS = Doc(
    id="en_corrupted_sensors",
    language="en",
    kind="corrupted",
    title="Calibrating Low-Cost Particulate Sensors in School Classrooms",
    authors="Anika Rao and Daniel Brooks",
    affiliation="School of Environmental Science, Westmoor University",
    venue="Indoor Air Notes 2018; 6: 23-29",
    date="2018-10-05",
    font_size=12,
    leading=1.7,
    notes="A valid generated PDF cut short at 55% of its bytes, as after an interrupted "
    "download; Poppler cannot open it.",
    abstracts=(
        Abstract("en", "Abstract", text("""
            Low-cost optical sensors make it possible to monitor particulate matter in every
            classroom of a school, but their readings depend on humidity and on the type of
            particles. We placed twelve sensors next to a reference instrument for four weeks
            and fitted a correction with humidity as a covariate. The corrected readings
            agreed with the reference within 3 micrograms per cubic metre for hourly means.
            """)),
    ),
    body=body("""
        # 1. Introduction

        Children spend a large part of the day in classrooms, where ventilation is often
        poor. Reference instruments for fine particles are expensive and noisy, so they
        cannot be installed in every room. Optical sensors that cost a few tens of euros
        are an attractive alternative, provided that their readings can be corrected.

        # 2. Methods

        Twelve sensors were installed on a shelf next to a reference monitor in an empty
        classroom for four weeks. Hourly means were computed for both. We fitted a linear
        correction with relative humidity as a second covariate and evaluated it by
        leave-one-week-out validation.

        !fig Figure 1. Hourly readings of one sensor against the reference instrument.

        # 3. Results

        Raw readings overestimated the reference at high humidity by up to a factor of two.
        After correction, the mean absolute difference was below 3 micrograms per cubic
        metre for every sensor, and the ranking of rooms by exposure was unchanged.

        !tab Table 1. Mean absolute difference from the reference (micrograms per cubic
        metre). | Sensor group | Raw | Linear | With humidity :: Sensors 1-4 ; Sensors 5-8 ;
        Sensors 9-12

        # 4. Discussion

        A correction fitted over four weeks in one room may not hold in another season or
        in a room with different sources, such as a chalkboard or a kitchen nearby. We
        therefore recommend repeating the co-location for a week at the start of each
        term. The sensors themselves drifted little over the study period, but their
        lifetime in dusty rooms is not known.

        !newpage

        # Appendix

        !tab Table A1. Fitted coefficients of the humidity correction per sensor. | Sensor |
        Slope | Intercept | Humidity term :: S01 ; S02 ; S03 ; S04 ; S05 ; S06 ; S07 ; S08 ;
        S09 ; S10 ; S11 ; S12
        """),
    references=refs("""
        [1] M. Ortega. Optical particle counters in indoor settings. Indoor Air Notes,
        3:1-9, 2015.
        """),
)

DOCS = [GRAPHS, TRIAL, NOTE, SENSORS]
