"""French and Spanish sample documents (original texts written for this project; fictional)."""

from __future__ import annotations

from sample_docs import Abstract, Doc, body, refs, text

GLACIERS = Doc(
    id="fr_hal_cover_glaciers",
    language="fr",
    kind="cover-page",
    title="Bilan de masse de petits glaciers alpins estimé par photographies répétées",
    authors="Claire Dumas, Julien Marchetti et Anne Roussel",
    affiliation="Laboratoire de géographie alpine, Université de Valmont",
    venue="Revue de géographie de montagne, 2017, 45 (2), pp. 77-90",
    date="2017-09",
    hal_id="hal-09990417",
    font_size=11.5,
    leading=1.6,
    references_label="Références",
    notes="HAL cover page as page 1 (deposit record and the bilingual HAL notice), then a "
    "one-column paper with a French abstract (Résumé) followed by an English one (Abstract).",
    abstracts=(
        Abstract("fr", "Résumé", text("""
            Les petits glaciers des Alpes occidentales, de moins d'un kilomètre carré, sont
            rarement suivis sur le terrain alors qu'ils réagissent vite aux variations du
            climat. Nous proposons d'estimer leur bilan de masse à partir de photographies
            prises chaque fin d'été depuis des points fixes par des gardiens de refuge. Les
            images sont géoréférencées sur un modèle numérique de terrain, puis la position
            de la ligne de neige et la surface englacée sont mesurées.

            Sur six glaciers suivis de 2009 à 2016, l'altitude de la ligne de neige explique
            les trois quarts de la variance du bilan annuel mesuré sur le glacier voisin
            instrumenté. La perte cumulée est estimée entre 6 et 9 mètres d'équivalent en
            eau. La méthode, peu coûteuse, permettrait d'étendre le suivi à plusieurs
            centaines de petits glaciers.
            """), keywords="Mots-clés : glacier ; bilan de masse ; photographie répétée ; "
            "Alpes"),
        Abstract("en", "Abstract", text("""
            Small glaciers in the western Alps are seldom monitored in the field although
            they respond quickly to climate. We estimate their mass balance from photographs
            taken every late summer from fixed points by mountain hut wardens. On six
            glaciers observed from 2009 to 2016, the snow line altitude explains three
            quarters of the variance of the annual balance measured on a nearby reference
            glacier, and the cumulative loss is estimated at 6 to 9 metres water equivalent.
            """), keywords="Keywords: glacier; mass balance; repeat photography; Alps"),
    ),
    body=body("""
        # 1. Introduction

        Les glaciers de petite taille représentent la majorité des appareils glaciaires
        alpins en nombre, mais une faible part de la surface englacée. Leur temps de réponse
        aux variations du climat est court, de quelques années à une décennie, ce qui en
        fait de bons indicateurs. Pourtant, les mesures de bilan de masse par balises et
        carottages ne concernent qu'une dizaine de glaciers dans l'ensemble des Alpes, pour
        la plupart de grande taille.

        Les photographies prises chaque année depuis un même point offrent une source
        d'information peu exploitée. Elles sont nombreuses, car les gardiens de refuge et
        les guides photographient volontiers les glaciers visibles depuis leur lieu de
        travail, et elles couvrent souvent plusieurs décennies.

        # 2. Données et méthode

        Nous avons réuni 412 photographies de six glaciers du massif de Valmont, prises
        entre le 20 août et le 15 septembre de chaque année. Chaque image est orientée à
        l'aide d'une dizaine de points de contrôle identifiés sur un modèle numérique de
        terrain à 2 mètres de résolution.

        !fig Figure 1. Ligne de neige de fin d'été sur le glacier du Rocher Blanc, 2009 et 2016.

        La ligne de neige de fin d'été, limite entre la neige de l'année et la glace ou le
        névé plus ancien, est tracée à la main sur l'image orientée puis projetée sur le
        terrain. Son altitude moyenne sert d'indicateur du bilan annuel. Les contours du
        glacier sont tracés de la même manière pour suivre l'évolution de sa surface.

        # 3. Résultats

        L'altitude de la ligne de neige varie de 2 870 à 3 160 mètres selon les années.
        Les années chaudes de 2009, 2012 et 2015 se distinguent nettement, avec une ligne de
        neige située au-dessus du sommet de deux des six glaciers.

        !tab Tableau 1. Surface des glaciers étudiés (hectares). | Glacier | 2009 | 2012 | 2016
        :: Rocher Blanc ; Combe Noire ; Pierre Fendue ; Grand Clot ; Les Aiguillettes ;
        Vallon Sec

        La relation entre l'altitude de la ligne de neige et le bilan mesuré sur le glacier
        de référence voisin est linéaire, avec un coefficient de détermination de 0,76. En
        appliquant cette relation aux six glaciers, la perte cumulée sur huit ans est
        comprise entre 6 et 9 mètres d'équivalent en eau.

        # 4. Discussion

        La méthode repose sur l'hypothèse que la relation établie sur un glacier de
        référence vaut pour ses voisins, ce qui suppose des conditions d'exposition et
        d'alimentation comparables. Les avalanches, qui alimentent fortement certains
        petits glaciers encaissés, peuvent fausser l'estimation. Un réseau d'observateurs
        plus large permettrait de tester cette hypothèse sur d'autres massifs.
        """),
    references=refs("""
        Bernard, L. et Faure, P. (2012). Les petits glaciers des Alpes : inventaire et
        évolution récente. Annales de glaciologie alpine, 18, 45-61.

        Morin, S. (2015). Photographie répétée et paysages de montagne. Cahiers de géographie
        physique, 9, 112-130.
        """),
)

ACOUSTIQUE = Doc(
    id="fr_twocol_acoustique",
    language="fr",
    kind="article",
    title="Propagation du bruit routier dans les rues étroites : mesures et modèle simplifié",
    authors="Hugo Lefèvre et Nadia Benali",
    affiliation="Institut d'acoustique urbaine, Lyon-Sud",
    venue="Acoustique et Techniques, n° 112, novembre 2023",
    date="2023-11-20",
    columns=2,
    font_size=11,
    leading=1.55,
    references_label="Références",
    notes="Two-column body; French abstract across the full width under the title; the "
    "English abstract is printed at the end of the document, after the references.",
    abstracts=(
        Abstract("fr", "Résumé", text("""
            Dans les rues étroites bordées de façades hautes, les réflexions multiples
            augmentent le niveau sonore du trafic par rapport à une voie dégagée. Nous avons
            mesuré le bruit routier dans douze rues d'un centre ancien et comparé les
            niveaux à ceux d'un modèle simplifié fondé sur la méthode des sources images.
            Le modèle reproduit les niveaux équivalents à 1,5 dB près lorsque la largeur de
            la rue est inférieure à la hauteur des façades.
            """), keywords="Mots-clés : bruit routier ; rue canyon ; sources images"),
        Abstract("en", "Abstract", text("""
            In narrow streets lined with tall facades, multiple reflections raise the
            level of traffic noise compared with an open road. We measured road noise in
            twelve streets of an old town centre and compared the levels with a simplified
            image source model. The model reproduces equivalent levels within 1.5 dB when
            the street is narrower than the facades are high.
            """), at_end=True, keywords="Keywords: road traffic noise; street canyon; "
            "image sources"),
    ),
    body=body("""
        # 1. Introduction

        Les cartes de bruit stratégiques des agglomérations sont calculées avec des
        méthodes normalisées qui traitent correctement la propagation en champ libre et les
        écrans, mais représentent de façon sommaire les réflexions multiples entre façades.
        Or, dans les centres anciens, une grande partie de la population vit le long de rues
        dont la largeur ne dépasse pas la hauteur des immeubles.

        Dans ces rues dites canyons, le son émis par les véhicules est renvoyé plusieurs
        fois d'une façade à l'autre avant de s'atténuer. Le niveau mesuré en façade peut
        alors dépasser de plusieurs décibels celui prévu par un calcul qui ne retient
        qu'une ou deux réflexions.

        Cet article présente une campagne de mesures dans douze rues d'un centre ancien et
        la compare à un modèle simplifié, assez rapide pour être appliqué à l'ensemble des
        rues d'une agglomération. La section 2 résume les travaux antérieurs, la section 3
        décrit les mesures, la section 4 le modèle et la section 5 discute les écarts.

        # 2. Travaux antérieurs

        Les premières études des rues canyons ont été menées en maquette, à échelle
        réduite, avec des sources impulsionnelles. Elles ont montré que le champ sonore
        dans une rue étroite se rapproche d'un champ diffus, dont le niveau dépend surtout
        de l'absorption des façades et de la chaussée. Les méthodes de calcul par rayons ou
        par éléments finis permettent aujourd'hui de traiter des géométries réalistes, mais
        leur coût interdit de les appliquer à toutes les rues d'une ville.

        Entre ces deux extrêmes, plusieurs auteurs ont proposé des formules de correction à
        ajouter au niveau calculé en champ libre, fonction du rapport entre hauteur et
        largeur de la rue. Ces formules sont simples, mais leurs coefficients ont été
        établis sur un petit nombre de rues modernes, aux façades lisses et continues.

        !fig Figure 1. Géométrie de la rue canyon et premières sources images.

        # 3. Mesures

        Douze rues ont été choisies pour couvrir des rapports entre hauteur et largeur
        allant de 0,8 à 3,2. Dans chaque rue, deux microphones ont été placés à 4 mètres
        de hauteur, l'un contre une façade, l'autre à mi-largeur. Les mesures ont duré une
        semaine, accompagnées de comptages de trafic par caméra.

        !fig Figure 2. Niveau équivalent mesuré en fonction du rapport hauteur sur largeur.

        Les niveaux équivalents de jour varient de 61 à 72 dB(A). À trafic égal, les rues
        les plus étroites sont les plus bruyantes, et l'écart entre le microphone en façade
        et celui placé à mi-largeur diminue quand la rue se referme.

        # 4. Modèle simplifié

        Le modèle représente la rue comme deux plans parallèles réfléchissants. Chaque
        véhicule est une source ponctuelle dont on construit les images successives par
        symétrie par rapport aux façades. Le coefficient d'absorption des façades, supposé
        uniforme, est le seul paramètre ajusté. Le nombre d'images est limité à vingt, au
        delà desquelles la contribution devient négligeable.

        !tab Tableau 1. Écart entre niveaux calculés et mesurés (dB). | Rapport H/L | Façade |
        Mi-largeur | Moyenne :: Moins de 1 ; De 1 à 2 ; Plus de 2

        # 5. Discussion et conclusion

        Pour les rues étroites, l'accord entre calcul et mesure est bon, de l'ordre de 1,5
        dB. Pour les rues plus larges, le modèle surestime légèrement les niveaux, car les
        ouvertures entre immeubles laissent échapper une partie de l'énergie. Un tel
        modèle, très rapide, pourrait corriger les cartes de bruit existantes rue par rue
        sans recourir à des calculs de propagation complets.

        !fig Figure 3. Écart entre calcul et mesure pour les douze rues, par microphone.

        Les balcons, les décrochements de façade et les arbres d'alignement diffusent le son
        et réduisent l'effet des réflexions multiples. Ils n'ont pas été pris en compte ici,
        et les rues étudiées en comportaient peu. Une seconde campagne portera sur des rues
        plantées.
        """),
    references=refs("""
        [1] Girard, M. (2014). Propagation acoustique en milieu urbain. Presses
        universitaires de Valmont.

        [2] Okada, T., Pereira, L. (2019). Street canyon acoustics revisited. Journal of
        Urban Sound, 7(2), 55-71.

        [3] Roux, E. (2021). Cartes de bruit et exposition des riverains. Acoustique et
        Techniques, 104, 18-25.
        """),
)

SUELOS = Doc(
    id="es_scielo_suelos",
    language="es",
    kind="article",
    title="Carbono orgánico del suelo en sistemas agroforestales de café en laderas andinas",
    authors="María José Quintero, Andrés Salazar y Lucía Paredes",
    affiliation="Facultad de Ciencias Agrarias, Universidad del Valle Alto",
    venue="Revista de Ciencias del Suelo, vol. 34, n. 1, 2016, pp. 15-28",
    date="2016-04",
    font_size=11,
    leading=1.6,
    references_label="Referencias",
    notes="SciELO-style one-column article: Resumen with Palabras clave, then an English "
    "Abstract with Keywords, both on page 1.",
    abstracts=(
        Abstract("es", "Resumen", text("""
            Los sistemas agroforestales con café pueden almacenar más carbono en el suelo
            que los cultivos a pleno sol, pero la magnitud de esta diferencia en laderas de
            fuerte pendiente es poco conocida. Se muestrearon 48 parcelas en tres municipios
            cafeteros, a cuatro profundidades hasta un metro, en cafetales con sombra de
            guamo, con sombra diversa y sin sombra. Los suelos bajo sombra diversa
            presentaron en promedio un 23 % más de carbono orgánico en el primer metro que
            los cafetales a pleno sol, y la diferencia se concentró en los primeros 30
            centímetros. La pendiente redujo el carbono acumulado en todos los sistemas.
            """), keywords="Palabras clave: agroforestería; café; carbono orgánico; "
            "pendiente"),
        Abstract("en", "Abstract", text("""
            Agroforestry systems with coffee may store more soil carbon than full-sun
            plantations, but the size of this difference on steep slopes is poorly known.
            We sampled 48 plots in three coffee-growing municipalities, at four depths down
            to one metre, under shade of guamo trees, diverse shade and no shade. Soils under
            diverse shade held on average 23% more organic carbon in the first metre than
            full-sun plantations, and the difference was concentrated in the top 30
            centimetres. Slope reduced the stored carbon in all systems.
            """), keywords="Keywords: agroforestry; coffee; organic carbon; slope"),
    ),
    body=body("""
        # Introducción

        El café se cultiva en las laderas andinas desde hace más de un siglo, tanto bajo
        sombra de árboles como a pleno sol. La sombra reduce la temperatura del cultivo,
        protege el suelo de la erosión y aporta hojarasca, lo que debería favorecer la
        acumulación de materia orgánica. Sin embargo, la conversión a sistemas sin sombra,
        más productivos a corto plazo, ha avanzado en las últimas décadas.

        Los inventarios de carbono del suelo en zonas cafeteras suelen limitarse a los
        primeros 20 o 30 centímetros y a terrenos de pendiente moderada. En laderas de más
        de 40 % de pendiente, la escorrentía puede arrastrar la materia orgánica superficial
        y modificar las diferencias entre sistemas.

        # Materiales y métodos

        El estudio se realizó en tres municipios situados entre 1.400 y 1.900 metros de
        altitud, con precipitación anual de 1.800 a 2.300 milímetros. En cada municipio se
        seleccionaron 16 parcelas de tamaño similar, repartidas entre los tres sistemas de
        manejo y dos clases de pendiente.

        En cada parcela se abrieron tres calicatas y se tomaron muestras a 0-10, 10-30,
        30-60 y 60-100 centímetros de profundidad. El carbono orgánico se determinó por
        combustión seca y la densidad aparente por el método del cilindro. Las existencias
        de carbono se calcularon por masa equivalente de suelo para evitar sesgos debidos a
        la compactación.

        !tab Tabla 1. Características de las parcelas por sistema de manejo. | Sistema |
        Parcelas | Pendiente (%) | Edad (años) :: Sombra de guamo ; Sombra diversa ; Pleno sol

        Las diferencias entre sistemas se analizaron con modelos lineales mixtos, con el
        municipio como efecto aleatorio y la pendiente como covariable.

        # Resultados

        Las existencias de carbono en el primer metro variaron entre 96 y 188 toneladas por
        hectárea. Los cafetales con sombra diversa presentaron los valores más altos,
        seguidos por los de sombra de guamo y por los de pleno sol. Más de la mitad del
        carbono se encontró en los primeros 30 centímetros en todos los sistemas.

        !fig Figura 1. Carbono orgánico por profundidad en los tres sistemas de manejo.

        La pendiente tuvo un efecto negativo en todos los sistemas: por cada diez puntos de
        pendiente adicionales, las existencias disminuyeron alrededor de un 6 %. La
        interacción entre sistema y pendiente no fue significativa.

        !fig Figura 2. Relación entre pendiente y carbono acumulado en el primer metro.

        # Discusión

        La ventaja de los sistemas con sombra diversa coincide con la mayor producción de
        hojarasca y con la presencia de raíces profundas de los árboles de sombra. Que la
        diferencia se concentre en la capa superficial sugiere que se trata de carbono
        relativamente reciente y, por tanto, vulnerable a cambios de manejo.

        El efecto de la pendiente confirma la importancia de la erosión en estas laderas.
        Las prácticas que reducen la escorrentía, como las barreras vivas y la cobertura
        del suelo entre hileras, podrían sumar sus efectos a los de la sombra.

        # Conclusiones

        Mantener o restablecer la sombra diversa en los cafetales de ladera permite
        conservar más carbono en el suelo. Los inventarios que se limitan a la capa
        superficial captan la mayor parte de la diferencia entre sistemas, pero no las
        existencias totales.
        """),
    references=refs("""
        Arango, P. y Rivas, C. (2013). Sombra y productividad del café en la zona andina.
        Agronomía de Montaña, 21(2), 33-47.

        Benítez, L. (2015). Métodos de masa equivalente para inventarios de carbono del
        suelo. Suelos Tropicales, 12, 101-115.

        Ocampo, R., Vélez, M. y Duarte, S. (2014). Erosión en laderas cafeteras. Revista de
        Ciencias del Suelo, 32(1), 5-19.
        """),
)

TUTOR = Doc(
    id="es_encrypted_tutor",
    language="es",
    kind="encrypted",
    title="Evaluación de un tutor automático de programación en cursos introductorios",
    authors="Diego Herrera y Carmen Vidal",
    affiliation="Escuela de Informática, Universidad de la Costa Norte",
    venue="Revista de Educación en Computación, 2022, 11(2), 44-52",
    date="2022-05-09",
    font_size=12.5,
    leading=1.8,
    references_label="Referencias",
    notes="A generated PDF encrypted with qpdf (AES-128, static id and IV so that the bytes "
    "are reproducible); the user password is 'user', the owner password 'owner'.",
    abstracts=(
        Abstract("es", "Resumen", text("""
            Presentamos la evaluación de un tutor automático que comenta los errores de los
            estudiantes en ejercicios de programación. En dos cursos introductorios, los
            grupos que usaron el tutor entregaron más ejercicios correctos y pidieron menos
            ayuda presencial que los grupos de control.
            """)),
        Abstract("en", "Abstract", text("""
            We evaluate an automatic tutor that comments on students' errors in programming
            exercises. In two introductory courses, groups using the tutor submitted more
            correct exercises and asked for less face-to-face help than control groups.
            """)),
    ),
    body=body("""
        # Introducción

        Los cursos introductorios de programación reúnen a cientos de estudiantes, y los
        profesores no pueden revisar cada intento de cada ejercicio. Los correctores
        automáticos indican si un programa es correcto, pero rara vez explican por qué no
        lo es.

        # Método

        El tutor ejecuta el programa del estudiante con casos de prueba y, cuando falla,
        compara la salida con errores frecuentes registrados en años anteriores para
        proponer una pista. Se comparó un grupo con tutor y otro sin él en cada curso.

        !tab Tabla 1. Ejercicios correctos por estudiante. | Curso | Con tutor | Sin tutor |
        Diferencia :: Curso A ; Curso B

        # Resultados

        Los estudiantes con tutor resolvieron en promedio dos ejercicios más por semana y
        las consultas en horario de tutoría disminuyeron a la mitad.

        !fig Figura 1. Ejercicios correctos acumulados por semana en ambos grupos.

        # Discusión

        El tutor no sustituye la explicación del profesor: sus pistas describen el síntoma
        de un error, no el concepto que el estudiante no ha comprendido. Las entrevistas
        con los estudiantes indican que las pistas fueron más útiles en los ejercicios de
        bucles y condiciones que en los de funciones recursivas, donde los errores son más
        variados y el catálogo de errores frecuentes cubre menos casos.

        Los grupos no se asignaron al azar, sino por horario, y los profesores sabían qué
        grupos usaban el tutor. Ambos hechos pueden haber influido en los resultados.

        # Conclusiones

        Las pistas basadas en errores frecuentes son fáciles de construir y útiles para los
        estudiantes. Su efecto sobre el aprendizaje a largo plazo queda por medir.

        !newpage

        # Anexo

        !tab Tabla A1. Pistas mostradas por tipo de error. | Tipo de error | Curso A | Curso B
        | Total :: Índice fuera de rango ; Condición invertida ; Bucle infinito ; Variable sin
        inicializar ; Tipo incorrecto ; Salida mal formateada
        """),
    references=refs("""
        Mora, J. (2019). Corrección automática de programas. Editorial Académica del Sur.
        """),
)

DOCS = [GLACIERS, ACOUSTIQUE, SUELOS, TUTOR]
